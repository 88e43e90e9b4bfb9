# Runs PROGRAM with ARGS ('|'-separated) and checks that it exits 0 and that its output contains
# EXPECT_FORMAT with @VALUE@ replaced by the contents of EXPECT_FILE (trailing newline removed).
#   cmake -DPROGRAM=... -DARGS=a|b -DEXPECT_FILE=... -DEXPECT_FORMAT="top class: @VALUE@ " -P ...
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err
  RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
file(READ ${EXPECT_FILE} value)
string(STRIP "${value}" value)
string(REPLACE "@VALUE@" "${value}" expected "${EXPECT_FORMAT}")
string(FIND "${out}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "output does not contain '${expected}'")
endif()
