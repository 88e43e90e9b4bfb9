# Copies the model manifest SRC to DST when it differs (an empty DST when SRC is missing), so that
# DST's time stamp changes only with the manifest.
if(EXISTS ${SRC})
  file(READ ${SRC} content)
else()
  set(content "")
endif()
if(EXISTS ${DST})
  file(READ ${DST} old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE ${DST} "${content}")
