# gpubench_tuned_header(OUTPUT <file> KERNEL <name> [CACHE <dir>] [DEVICE <device>]
#                       [FALLBACK <header>] [PREFIX <prefix>])
#
# Makes <file> (relative to the current binary directory) the tuned header of kernel
# <name>: `gpubench export --header <file> --kernel <name> ...` runs at build time,
# again whenever the cache's data.mdb changes, and leaves the file untouched when its
# content would not change. List <file> among the sources of a target in the same
# directory so that the rule runs before that target compiles.
#
#   CACHE     the cache directory (default, read at configure time: $GPUBENCH_CACHE,
#             else $XDG_CACHE_HOME/gpubench, else $HOME/.cache/gpubench)
#   DEVICE    the device fingerprint, or a part of it that names one device; needed
#             when the cache holds the kernel for several devices
#   FALLBACK  a checked-in header (relative to the current source directory) used
#             when the cache has no entry for the kernel, and copied at configure time
#             when there is no gpubench at all
#   PREFIX    the names' prefix in the header (default: the kernel's name)
#
# gpubench is found as: GPUBENCH_EXECUTABLE when set (set it empty to build with the
# fallback only), else the imported target gpubench::gpubench (find_package), else
# find_program(gpubench). With neither gpubench nor FALLBACK, configuring fails.
include_guard(GLOBAL)

function(_gpubench_default_cache out_var)
  if(DEFINED ENV{GPUBENCH_CACHE} AND NOT "$ENV{GPUBENCH_CACHE}" STREQUAL "")
    set(dir "$ENV{GPUBENCH_CACHE}")
  elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(dir "$ENV{XDG_CACHE_HOME}/gpubench")
  elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
    set(dir "$ENV{HOME}/.cache/gpubench")
  else()
    set(dir "")
  endif()
  set(${out_var} "${dir}" PARENT_SCOPE)
endfunction()

# The gpubench command to run, or "" when there is none.
function(_gpubench_find_tool out_var)
  if(DEFINED GPUBENCH_EXECUTABLE AND NOT GPUBENCH_EXECUTABLE MATCHES "-NOTFOUND$")
    set(tool "${GPUBENCH_EXECUTABLE}")
  elseif(TARGET gpubench::gpubench)
    set(tool gpubench::gpubench)
  else()
    find_program(GPUBENCH_EXECUTABLE gpubench DOC "gpubench, for gpubench_tuned_header()")
    set(tool "${GPUBENCH_EXECUTABLE}")
    if(tool MATCHES "-NOTFOUND$")
      set(tool "")
    endif()
  endif()
  set(${out_var} "${tool}" PARENT_SCOPE)
endfunction()

function(gpubench_tuned_header)
  cmake_parse_arguments(GB "" "OUTPUT;KERNEL;CACHE;DEVICE;FALLBACK;PREFIX" "" ${ARGN})
  if(GB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gpubench_tuned_header: unknown arguments: ${GB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT GB_OUTPUT OR NOT GB_KERNEL)
    message(FATAL_ERROR "gpubench_tuned_header: OUTPUT <file> and KERNEL <name> are required")
  endif()
  get_filename_component(out "${GB_OUTPUT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(fallback "")
  if(GB_FALLBACK)
    get_filename_component(fallback "${GB_FALLBACK}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${fallback}")
      message(FATAL_ERROR "gpubench_tuned_header: FALLBACK ${fallback} does not exist")
    endif()
  endif()

  _gpubench_find_tool(tool)
  if(tool STREQUAL "")
    if(fallback STREQUAL "")
      message(FATAL_ERROR
        "gpubench_tuned_header(${GB_KERNEL}): gpubench was not found and no FALLBACK header "
        "was given. Install gpubench and point CMAKE_PREFIX_PATH at it (find_package(gpubench)), "
        "set GPUBENCH_EXECUTABLE, or give FALLBACK <header>.")
    endif()
    message(STATUS "gpubench_tuned_header(${GB_KERNEL}): gpubench not found; "
                   "using the fallback ${fallback}")
    configure_file("${fallback}" "${out}" COPYONLY)
    return()
  endif()

  set(cache "${GB_CACHE}")
  if(cache STREQUAL "")
    _gpubench_default_cache(cache)
  else()
    get_filename_component(cache "${cache}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  set(args export --header "${out}" --kernel "${GB_KERNEL}")
  if(NOT cache STREQUAL "")
    list(APPEND args --cache "${cache}")
  endif()
  if(GB_DEVICE)
    list(APPEND args --device "${GB_DEVICE}")
  endif()
  if(GB_PREFIX)
    list(APPEND args --prefix "${GB_PREFIX}")
  endif()
  set(depends "")
  if(NOT fallback STREQUAL "")
    list(APPEND args --fallback "${fallback}")
    list(APPEND depends "${fallback}")
  endif()
  # Every committed change to the cache rewrites data.mdb. A cache created after
  # configuring is seen once cmake runs again.
  if(NOT cache STREQUAL "" AND EXISTS "${cache}/data.mdb")
    list(APPEND depends "${cache}/data.mdb")
  else()
    message(STATUS "gpubench_tuned_header(${GB_KERNEL}): no cache at '${cache}' yet; "
                   "re-run cmake once there is one, so that changes to it rebuild ${GB_OUTPUT}")
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${tool} ${args}
    DEPENDS ${depends}
    COMMENT "Exporting the tuned table of ${GB_KERNEL} to ${GB_OUTPUT}"
    VERBATIM)
endfunction()
