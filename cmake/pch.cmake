# Precompiled headers: the standard library and {fmt} parsed once per build tree (target sp_pch)
# and reused by every C++ target that links {fmt}. Parsing them was a third of a typical
# translation unit's compile time (trainers/dp/engine.cpp: 7.1 s, 4.7 s with them precompiled, -O3
# -g1 on an AMD EPYC family 23 model 1), and CI compiles the tree in four stages.
# scaleprobe_precompiled_headers() runs after every target is defined (top-level CMakeLists.txt).
# A target that does not link {fmt} (kernels/) keeps plain includes: its compile lines lack
# FMT_SHARED, which the precompiled {fmt} was parsed with, so the compiler would refuse the header
# and parse it as text. So do a target with compile options of its own (the fuzzers'
# -fsanitize=fuzzer, which clang refuses to mix) and a source with its own (-march=x86-64-v4
# objects, -ffast-math, -O0): the precompiled header must match their flags. SCALEPROBE_PCH=OFF turns it off.
option(SCALEPROBE_PCH "Precompile the standard library and {fmt} headers once per build tree" ON)

# _sp_targets_in(dir out): every target defined in dir and below.
function(_sp_targets_in dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _sp_targets_in(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# _sp_links_fmt(target out): TRUE when target links fmt::fmt, directly or through project libraries.
function(_sp_links_fmt target out)
  set(todo ${target})
  set(seen "")
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    if(t STREQUAL "fmt::fmt")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(imported ${t} IMPORTED)
    if(imported)
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    set(links "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${t} LINK_LIBRARIES)
    endif()
    get_target_property(interface_links ${t} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS links interface_links)
      if(l AND NOT l MATCHES "NOTFOUND$")
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
        list(APPEND todo ${l})
      endif()
    endforeach()
  endwhile()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

function(scaleprobe_precompiled_headers)
  if(NOT SCALEPROBE_PCH)
    return()
  endif()
  # The target needs one source to build the header for; an empty one, generated (no source of
  # the tree outside the parts of docs/architecture.md).
  if(NOT EXISTS ${PROJECT_BINARY_DIR}/sp_pch.cpp)  # written once: a new file would rebuild every target
    file(WRITE ${PROJECT_BINARY_DIR}/sp_pch.cpp "// builds the precompiled header of cmake/pch.cmake\n")
  endif()
  add_library(sp_pch STATIC ${PROJECT_BINARY_DIR}/sp_pch.cpp)
  target_link_libraries(sp_pch PRIVATE fmt::fmt OpenMP::OpenMP_CXX)
  target_precompile_headers(sp_pch PRIVATE
    <algorithm> <array> <cmath> <cstddef> <cstdint> <cstdio> <cstdlib> <cstring> <filesystem>
    <functional> <map> <memory> <optional> <span> <string> <string_view> <utility> <vector>
    <fmt/format.h>)
  _sp_targets_in(${PROJECT_SOURCE_DIR} targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(t STREQUAL "sp_pch" OR NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    get_target_property(source_dir ${t} SOURCE_DIR)
    set(has_cxx FALSE)
    set(has_cuda FALSE)
    foreach(s IN LISTS sources)
      if(s MATCHES "\\.cu$")
        set(has_cuda TRUE)
      elseif(s MATCHES "\\.cpp$")
        set(has_cxx TRUE)
      endif()
    endforeach()
    _sp_links_fmt(${t} links_fmt)
    get_target_property(target_options ${t} COMPILE_OPTIONS)
    if(NOT has_cxx OR has_cuda OR NOT links_fmt OR target_options)
      continue()
    endif()
    target_precompile_headers(${t} REUSE_FROM sp_pch)
    foreach(s IN LISTS sources)
      # A relative source path is read relative to the current directory, not the DIRECTORY given.
      cmake_path(ABSOLUTE_PATH s BASE_DIRECTORY ${source_dir})
      get_property(options SOURCE ${s} DIRECTORY ${source_dir} PROPERTY COMPILE_OPTIONS)
      if(options)
        set_property(SOURCE ${s} DIRECTORY ${source_dir} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endforeach()
endfunction()
