# glad is generated at build time by Debian's python3-glad. Offline it needs --reproducible (it
# would otherwise try to download the GL spec). The python3 first on PATH may lack the module, so
# each candidate is asked to import it. Sets GLAD_PYTHON (empty when none has it).
if(NOT DEFINED GLAD_PYTHON OR NOT GLAD_PYTHON)
  set(GLAD_PYTHON "")
  foreach(candidate python3 /usr/bin/python3)
    find_program(_py NAMES ${candidate} NO_CACHE)
    if(_py)
      execute_process(COMMAND ${_py} -c "import glad" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
      if(_rc EQUAL 0)
        set(GLAD_PYTHON ${_py})
        break()
      endif()
    endif()
    unset(_py)
  endforeach()
endif()
