# attnbench-source.json: how the source backend kind (core/src/plugins/source_kind.cpp) compiles
# a user's .cpp or .cu into a plugin on first use, against this attnbench's headers and LibTorch,
# with the compilers CMake found. One beside the binary (absolute paths), one installed into
# lib/attnbench/ (the attnbench paths relative to it).
set(_recipe_defines "\"-DNDEBUG\"")  # as LibTorch was built (see CMakeLists.txt)
foreach(flag ${TORCH_CXX_FLAGS})
  if(flag MATCHES "^-D")
    list(APPEND _recipe_defines "\"${flag}\"")
  endif()
endforeach()
set(_torch_libs "")
set(_rpath "\"${TORCH_INSTALL_PREFIX}/lib\"")
foreach(lib torch torch_cpu c10 torch_cuda c10_cuda)
  if(EXISTS "${TORCH_INSTALL_PREFIX}/lib/lib${lib}.so")
    list(APPEND _torch_libs "\"${TORCH_INSTALL_PREFIX}/lib/lib${lib}.so\"")
  endif()
endforeach()
set(_external_includes "")
# The system's own folder stays out: -isystem /usr/include breaks libstdc++'s #include_next.
foreach(dir ${TORCH_INCLUDE_DIRS} ${Boost_INCLUDE_DIRS})
  if(NOT dir STREQUAL "/usr/include")
    list(APPEND _external_includes "\"${dir}\"")
  endif()
endforeach()
set(_nvcc "")
if(ATTNBENCH_WITH_CUDA AND CUDAToolkit_NVCC_EXECUTABLE)
  set(_nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
  foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
    if(NOT dir STREQUAL "/usr/include")
      list(APPEND _external_includes "\"${dir}\"")
    endif()
  endforeach()
  list(APPEND _torch_libs "\"${CUDAToolkit_LIBRARY_DIR}/libcudart.so\"")
  string(APPEND _rpath ", \"${CUDAToolkit_LIBRARY_DIR}\"")
endif()
list(JOIN _recipe_defines ", " _recipe_defines)
list(JOIN _torch_libs ", " _torch_libs)
list(JOIN _external_includes ", " _external_includes)

function(attnbench_source_recipe output include_dirs sdpa_library)
  file(GENERATE OUTPUT ${output} CONTENT "{
  \"cxx\": \"${CMAKE_CXX_COMPILER}\",
  \"nvcc\": \"${_nvcc}\",
  \"defines\": [${_recipe_defines}],
  \"include_dirs\": [${include_dirs}, ${_external_includes}],
  \"libraries\": [\"${sdpa_library}\", ${_torch_libs}],
  \"rpath\": [${_rpath}]
}
")
endfunction()

attnbench_source_recipe(${PROJECT_BINARY_DIR}/attnbench-source.json
  "\"${PROJECT_SOURCE_DIR}/core/include\", \"${PROJECT_SOURCE_DIR}/plugins/common/include\""
  "$<TARGET_FILE:attnbench_sdpa>")
if(ATTNBENCH_INSTALL)
  include(GNUInstallDirs)
  set(_from ${CMAKE_INSTALL_PREFIX}/lib/attnbench)
  file(RELATIVE_PATH _include ${_from} ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR})
  file(RELATIVE_PATH _sdpa ${_from}
       ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:attnbench_sdpa>)
  attnbench_source_recipe(${PROJECT_BINARY_DIR}/install/attnbench-source.json "\"${_include}\""
                          "${_sdpa}")
  install(FILES ${PROJECT_BINARY_DIR}/install/attnbench-source.json DESTINATION lib/attnbench)
endif()
