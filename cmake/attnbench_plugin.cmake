# attnbench_add_plugin(<name> [SOURCES] <source>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a backend plugin: a module library attnbench_<name>.so linked against the plugin API,
# attnbench's helpers (attnbench::sdpa) and LibTorch, with hidden symbols (only what
# ATTNBENCH_PLUGIN exports is seen). CUDA sources (.cu) are fine: enable CUDA in your project and
# set CMAKE_CUDA_ARCHITECTURES (90 for H100/H200).
# The library lands in OUTPUT_DIRECTORY, default <build>/plugins; point attnbench at it with
# --plugin-dir or $ATTNBENCH_PLUGIN_PATH. Used by attnbench's own tree and by an installed
# attnbench (find_package(attnbench)) alike.
function(attnbench_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_DIRECTORY" "SOURCES")
  set(sources ${arg_SOURCES} ${arg_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "attnbench_add_plugin(${name}): no sources")
  endif()
  if(arg_OUTPUT_DIRECTORY)
    set(out ${arg_OUTPUT_DIRECTORY})
  elseif(ATTNBENCH_PLUGIN_OUTPUT_DIR)
    set(out ${ATTNBENCH_PLUGIN_OUTPUT_DIR})
  else()
    set(out ${CMAKE_BINARY_DIR}/plugins)
  endif()
  add_library(attnbench_plugin_${name} MODULE ${sources})
  target_link_libraries(attnbench_plugin_${name} PRIVATE attnbench::plugin_api attnbench::sdpa
                                                         ${TORCH_LIBRARIES})
  # LibTorch's classes have another layout without NDEBUG (its wheel is built with it).
  target_compile_definitions(attnbench_plugin_${name} PRIVATE $<$<CONFIG:Debug>:NDEBUG>)
  set_target_properties(attnbench_plugin_${name} PROPERTIES
    PREFIX "" OUTPUT_NAME attnbench_${name}
    LIBRARY_OUTPUT_DIRECTORY ${out}
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden)
endfunction()
