# What `cmake --install` lays out, and the same bin/ in the build tree:
#   <prefix>/bin/                      every user-facing program, scaleprobe-analyze, submit-sweep
#   <prefix>/share/scaleprobe/jobs/    the SLURM job scripts and the sweep submitter
#   <prefix>/share/scaleprobe/analysis/  the scaleprobe-analyze wrapper
#   <prefix>/share/scaleprobe/python/  the Python tree (analysis, submitter, in-job code)
# The job scripts find programs as <build dir>/bin/<name> (SCALEPROBE_BUILD_DIR: a build tree or an
# install prefix), so the build tree gets a bin/ of links to its programs too.
include(GNUInstallDirs)
set(SCALEPROBE_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/scaleprobe)

# scaleprobe_program(TARGET): links <build>/bin/<name> to the target after each build, installs it.
function(scaleprobe_program target)
  target_link_libraries(${target} PRIVATE scaleprobe_isa_check)  # core/run/isa_check.cpp
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin
    COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:${target}> ${CMAKE_BINARY_DIR}/bin/$<TARGET_FILE_NAME:${target}>
    VERBATIM)
  install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# Scripts and the analysis package (called once from the top-level CMakeLists.txt).
function(scaleprobe_install_scripts)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/jobs/ DESTINATION ${SCALEPROBE_SHARE_DIR}/jobs USE_SOURCE_PERMISSIONS
          PATTERN __pycache__ EXCLUDE PATTERN site.env EXCLUDE)
  install(CODE "set(SP_SHARE \"${SCALEPROBE_SHARE_DIR}\")")
  install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/install_jobs.cmake)
  # The one Python tree (python/: analysis, sweep submitter, in-job code); the wrappers in jobs/
  # and analysis/ find it as ../python.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ DESTINATION ${SCALEPROBE_SHARE_DIR}/python
          PATTERN __pycache__ EXCLUDE PATTERN *.egg-info EXCLUDE)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/analysis/scaleprobe-analyze DESTINATION ${SCALEPROBE_SHARE_DIR}/analysis)
  install(FILES ${PROJECT_SOURCE_DIR}/analysis/README.md DESTINATION ${SCALEPROBE_SHARE_DIR}/analysis)
  # The marker by which the job (python/scaleprobe_sweep/job.py) and the submitter know they run from an installation
  # (default build dir: the prefix; default results: ./results of the submitting folder).
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/installed "scaleprobe ${PROJECT_VERSION}: an installed tree (cmake --install)\n")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/installed DESTINATION ${SCALEPROBE_SHARE_DIR})
  # bin/ entry points: relative links, so the prefix can move.
  foreach(link "scaleprobe-analyze:../${SCALEPROBE_SHARE_DIR}/analysis/scaleprobe-analyze"
               "submit-sweep:../${SCALEPROBE_SHARE_DIR}/jobs/submit-sweep")
    string(REPLACE ":" ";" parts "${link}")
    list(GET parts 0 name)
    list(GET parts 1 target)
    install(CODE "
      file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
      file(CREATE_LINK \"${target}\" \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${name}\" SYMBOLIC)
      message(STATUS \"Installing: \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${name} -> ${target}\")")
  endforeach()
endfunction()
