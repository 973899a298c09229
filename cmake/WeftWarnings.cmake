# Warnings for weft's own targets (not for peers or generated code).
add_library(weft_warnings INTERFACE)
target_compile_options(weft_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion
  # GCC 12 reports a false -Wrestrict inside libstdc++ for `"literal" + std::string&&` (GCC bug
  # 105329, fixed in 13); it says nothing about our code.
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
install(TARGETS weft_warnings EXPORT weftTargets)

# weft_add_layer(NAME SOURCES...): one library per layer, exported as weft::NAME.
function(weft_add_layer name)
  add_library(weft_${name} ${ARGN})
  add_library(weft::${name} ALIAS weft_${name})
  set_target_properties(weft_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME weft_${name})
  target_include_directories(weft_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(weft_${name} PRIVATE $<BUILD_INTERFACE:weft_warnings>)
  install(TARGETS weft_${name} EXPORT weftTargets)
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  # The target architecture's public headers of the layer (jit/arch/x64/include, ...), if it has any.
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/arch/${WEFT_ARCH}/include)
    target_include_directories(weft_${name} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/arch/${WEFT_ARCH}/include>)
    install(DIRECTORY arch/${WEFT_ARCH}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
  set_property(GLOBAL APPEND PROPERTY WEFT_LAYER_TARGETS weft_${name})
endfunction()
