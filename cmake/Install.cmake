# Install rules: the runtime (libcollage_runtime and the backend runtime modules next to it), the
# compiler (libcollage_compiler: its C API and the C++ API), the public headers, the `collage`
# command, a CMake package (find_package(collage) with collage::runtime and collage::compiler) and
# pkg-config files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(collage_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(collage_compiler PROPERTIES EXPORT_NAME compiler
  INSTALL_RPATH "$ORIGIN")
set_target_properties(collage PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

install(TARGETS collage_runtime collage_compiler EXPORT collageTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The runtime looks for its modules in its own directory.
install(TARGETS collage_rt_eigen collage_rt_dnnl collage_rt_trees collage_rt_dynamic collage_rt_strings LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET collage_rt_openvino)
  # OpenVINO is not installed with collage: the module, the CLI and libcollage_compiler find it
  # where CMake found it
  # (a machine without it there gets an error naming the module and libopenvino).
  set_target_properties(collage_rt_openvino PROPERTIES INSTALL_RPATH "${COLLAGE_OPENVINO_LIB_DIR}")
  set_target_properties(collage PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${COLLAGE_OPENVINO_LIB_DIR}")
  set_target_properties(collage_compiler PROPERTIES
    INSTALL_RPATH "$ORIGIN;${COLLAGE_OPENVINO_LIB_DIR}")
  install(TARGETS collage_rt_openvino LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS collage RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every public header: the C ABI (runtime.h, runtime_module.h, backend_plugin.h, collage.h) and the
# C++ API the compiler library exports.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/collage DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

set(COLLAGE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collage)
install(EXPORT collageTargets NAMESPACE collage:: DESTINATION ${COLLAGE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/collageConfig.cmake INSTALL_DESTINATION ${COLLAGE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collageConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collageConfig.cmake
  ${PROJECT_BINARY_DIR}/collageConfigVersion.cmake DESTINATION ${COLLAGE_CMAKE_DIR})

# pkg-config files locate the prefix from their own directory, so an installed tree can move.
file(RELATIVE_PATH COLLAGE_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
foreach(pc collage-runtime collage-compiler)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
