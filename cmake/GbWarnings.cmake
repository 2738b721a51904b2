# Warnings for every target of ours, applied through gb_target_defaults().
set(GB_WARNING_FLAGS
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
    -Wundef -Wvla -Wno-unused-parameter)
if(GB_WERROR)
  list(APPEND GB_WARNING_FLAGS -Werror)
endif()

if(GB_SANITIZE OR GB_FUZZ)
  set(GB_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined)
endif()
if(GB_FUZZ)
  # Coverage for libFuzzer in every library; only the fuzz targets link its main.
  list(APPEND GB_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
endif()

function(gb_target_defaults target)
  target_compile_options(${target} PRIVATE ${GB_WARNING_FLAGS} ${GB_SANITIZE_FLAGS})
  target_link_options(${target} PRIVATE ${GB_SANITIZE_FLAGS})
  # Build tree only: the installed package exports the tools, never these headers.
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
endfunction()
