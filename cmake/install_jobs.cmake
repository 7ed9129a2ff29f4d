# Run by `cmake --install` after the job scripts are copied (cmake/install.cmake): under sbatch a
# job script runs from a spool copy and cannot find its own folder, so each installed script gets
# its installation as the default root (the repository's copies look at SLURM_SUBMIT_DIR instead).
# Expects SP_SHARE (share/scaleprobe, relative to the prefix).
set(root "${CMAKE_INSTALL_PREFIX}/${SP_SHARE}")
file(GLOB scripts "$ENV{DESTDIR}${root}/jobs/*.sbatch")
foreach(script IN LISTS scripts)
  file(READ "${script}" text)
  string(REGEX REPLACE "\nr=[$][{]SCALEPROBE_ROOT:-[^\n]*" "\nr=\${SCALEPROBE_ROOT:-${root}}  # installed" text "${text}")
  string(FIND "${text}" "# installed" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${script}: no 'r=\${SCALEPROBE_ROOT:-...}' line to point at ${root}")
  endif()
  file(WRITE "${script}" "${text}")
endforeach()
