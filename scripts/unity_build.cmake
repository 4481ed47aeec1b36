# Included after project() of every interface package that scripts/build_ws.sh builds
# (CMAKE_PROJECT_INCLUDE), with CMAKE_UNITY_BUILD on: rosidl writes one source file per
# interface and type support, and compiled in batches the type support headers are parsed once
# per batch instead of once per file. rosidl's type description files (*__description.c)
# define static variables of the same names (the hashes and sources of the types they refer
# to), so each of them is still compiled alone.
cmake_minimum_required(VERSION 3.19)

function(_maes_unity_exclusions)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(source MATCHES "__description\\.c$")
        set_source_files_properties(${source} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
endfunction()

cmake_language(DEFER CALL _maes_unity_exclusions)
