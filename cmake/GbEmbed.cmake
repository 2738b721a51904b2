# gb_embed(<input file> <C symbol> <output .c>): turns a text file into a C array
# `const char SYMBOL[]` (NUL-terminated) and `const unsigned long SYMBOL_len`, so
# the binaries carry their CUDA and Lua sources and need no install tree.
function(gb_embed input symbol output)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DSYMBOL=${symbol} -DOUTPUT=${output}
            -P ${PROJECT_SOURCE_DIR}/cmake/GbEmbedScript.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/GbEmbedScript.cmake
    COMMENT "Embedding ${input}"
    VERBATIM)
endfunction()
