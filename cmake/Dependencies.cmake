# Finds the Debian-packaged dependencies. scripts/install-deps installs them.
find_package(absl REQUIRED)
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(dnnl REQUIRED)
find_package(benchmark REQUIRED)
find_package(Catch2 2 REQUIRED)
# RE2 (RegexFullMatch): Debian's libre2-dev ships a pkg-config file, no CMake package.
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
find_package(LLVM 16 REQUIRED CONFIG PATHS /usr/lib/llvm-16/lib/cmake/llvm NO_DEFAULT_PATH)
message(STATUS "collage: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

if(NOT COLLAGE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    message(STATUS "collage: CUDA ${CUDAToolkit_VERSION} found")
    set(COLLAGE_HAVE_CUDA ON)
    # The cuda runtime module needs the cuBLAS and cuDNN headers (it loads the libraries at run
    # time); cuDNN's may live outside the toolkit.
    find_path(COLLAGE_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_path(COLLAGE_CUBLAS_INCLUDE_DIR cublas_v2.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(COLLAGE_CUDNN_INCLUDE_DIR AND COLLAGE_CUBLAS_INCLUDE_DIR)
      set(COLLAGE_HAVE_CUDA_RUNTIME_MODULE ON)
    else()
      message(STATUS "collage: no cuDNN or cuBLAS headers; the cuda runtime module is not built")
    endif()
  elseif(COLLAGE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "COLLAGE_CUDA=ON but no CUDA toolkit was found")
  endif()
endif()

# OpenVINO (optional): its PyPI wheel, which scripts/install-deps puts in .venv, ships the C++
# headers, the libraries and a CMake package. With it the `openvino` backend and its runtime
# module libcollage_rt_openvino are built; without it (AUTO) the rest builds and says so here.
set(COLLAGE_OPENVINO "AUTO" CACHE STRING "OpenVINO backend: AUTO, ON or OFF")
set(COLLAGE_HAVE_OPENVINO OFF)
if(NOT COLLAGE_OPENVINO STREQUAL "OFF")
  file(GLOB collage_ov_config_dirs
    ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/openvino/cmake)
  find_package(OpenVINO CONFIG QUIET COMPONENTS Runtime
    PATHS ${collage_ov_config_dirs} NO_DEFAULT_PATH)
  if(OpenVINO_FOUND)
    # OpenVINOConfig.cmake adds -D_GLIBCXX_USE_CXX11_ABI=1 (the compiler's default anyway) to
    # every target of this directory; openvino::runtime carries it to the targets that use it,
    # and the others keep their flags (and their ccache entries).
    remove_definitions(-D_GLIBCXX_USE_CXX11_ABI=${OpenVINO_GLIBCXX_USE_CXX11_ABI})
    get_target_property(collage_ov_lib openvino::runtime IMPORTED_LOCATION_RELEASE)
    get_filename_component(COLLAGE_OPENVINO_LIB_DIR ${collage_ov_lib} DIRECTORY)
    message(STATUS "collage: OpenVINO ${OpenVINO_VERSION} found (${OpenVINO_DIR}): "
      "the openvino backend and libcollage_rt_openvino are built")
    set(COLLAGE_HAVE_OPENVINO ON)
  elseif(COLLAGE_OPENVINO STREQUAL "ON")
    message(FATAL_ERROR "COLLAGE_OPENVINO=ON but OpenVINO was not found in "
      "${PROJECT_SOURCE_DIR}/.venv (scripts/install-deps installs the openvino wheel there)")
  else()
    message(STATUS "collage: OpenVINO not found in ${PROJECT_SOURCE_DIR}/.venv "
      "(scripts/install-deps installs it): building without the openvino backend")
  endif()
endif()
