# Finds what gpubench builds against. A missing piece stops configure with the Debian
# package that provides it (scripts/setup.sh installs them all).
#
# CUDA: NVRTC is linked; the driver API is used through its headers only. libcuda is
# opened with dlopen at run time, so the binaries start on machines with no driver.
# Lua 5.4, LMDB, xxHash, jansson, zlib (gzipped JSON files), GSL (the linear
# algebra of the auto strategy's model), cmocka: through pkg-config. When GB_DEPS_PREFIX names an unpacked offline
# bundle (scripts/deps-offline.sh), pkg-config looks there first.

find_package(Threads REQUIRED)
find_package(CUDAToolkit REQUIRED)
if(NOT CUDA_nvrtc_LIBRARY)
  message(FATAL_ERROR "NVRTC was not found in the CUDA toolkit at ${CUDAToolkit_LIBRARY_DIR}. "
                      "Install the CUDA toolkit (NVRTC is part of it) or set CUDAToolkit_ROOT.")
endif()
# Not CUDA::nvrtc: that target drags in libcuda (the driver), which must stay a
# run-time dlopen so the binaries start where there is no driver.
add_library(gb_nvrtc UNKNOWN IMPORTED)
set_target_properties(gb_nvrtc PROPERTIES
  IMPORTED_LOCATION "${CUDA_nvrtc_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")

set(GB_DEPS_PREFIX "" CACHE PATH "An unpacked offline dependency bundle (dpkg -x root)")
if(GB_DEPS_PREFIX)
  set(_triplet_lib "${GB_DEPS_PREFIX}/usr/lib/x86_64-linux-gnu")
  set(ENV{PKG_CONFIG_PATH}
      "${_triplet_lib}/pkgconfig:${GB_DEPS_PREFIX}/usr/share/pkgconfig:$ENV{PKG_CONFIG_PATH}")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${GB_DEPS_PREFIX}")
endif()

find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config was not found: install the Debian package pkgconf "
                      "(or run scripts/setup.sh).")
endif()

# gb_require_pkg(<target> <pkg-config name> <Debian package>)
function(gb_require_pkg target module debian)
  pkg_check_modules(${target} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR "${module} was not found by pkg-config: install the Debian package "
                        "${debian} (or run scripts/setup.sh).")
  endif()
  message(STATUS "Found ${module} ${${target}_VERSION}")
endfunction()

gb_require_pkg(GB_LUA lua5.4 liblua5.4-dev)
gb_require_pkg(GB_LMDB lmdb liblmdb-dev)
gb_require_pkg(GB_XXHASH libxxhash libxxhash-dev)
gb_require_pkg(GB_JANSSON jansson libjansson-dev)
gb_require_pkg(GB_ZLIB zlib zlib1g-dev)
gb_require_pkg(GB_GSL gsl libgsl-dev)
if(BUILD_TESTING OR NOT DEFINED BUILD_TESTING)
  gb_require_pkg(GB_CMOCKA cmocka libcmocka-dev)
endif()

# Debian puts luaconf.h under the multiarch include directory; a dpkg -x bundle
# needs that directory spelled out, since the sysroot does not know about it.
if(GB_DEPS_PREFIX)
  set_property(TARGET PkgConfig::GB_LUA APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
               "${GB_DEPS_PREFIX}/usr/include/x86_64-linux-gnu")
endif()
