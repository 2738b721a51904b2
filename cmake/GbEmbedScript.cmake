# Run by gb_embed() with -DINPUT= -DSYMBOL= -DOUTPUT=.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR n_bytes "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" body "${body}")
file(WRITE "${OUTPUT}"
  "/* Generated from ${INPUT} by cmake/GbEmbedScript.cmake; do not edit. */\n"
  "extern const char ${SYMBOL}[];\n"
  "extern const unsigned long ${SYMBOL}_len;\n"
  "const char ${SYMBOL}[] = {\n${body}0x00};\n"
  "const unsigned long ${SYMBOL}_len = ${n_bytes};\n")
