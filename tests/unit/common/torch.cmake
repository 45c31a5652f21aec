# Tests of the libtorch shim (common/torch). torch_header compiles jf_torch.h alone as C11 and as
# C++17 with warnings as errors and links no libtorch.
jf_add_unit_test(torch
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/torch_test.c
  LIBS jf_torch jf_common)
# It trains real networks on the CPU: 14-16 s alone on a 2-core VM, past the unit tests' 30 s
# when another test shares the cores.
math(EXPR jf_torch_timeout "90 * ${JF_TEST_TIMEOUT_SCALE}")
set_tests_properties(unit.torch PROPERTIES TIMEOUT ${jf_torch_timeout})

jf_add_unit_test(torch_header
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/torch_header_test.c
          ${PROJECT_SOURCE_DIR}/tests/unit/common/torch_header_cxx.cpp
  LIBS jf_common)
target_include_directories(torch_header_test PRIVATE ${PROJECT_SOURCE_DIR}/common/torch)
set_target_properties(torch_header_test PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
  CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(torch_header_test PRIVATE -Werror -Wall -Wextra -Wpedantic -Wshadow)

# Weight sets (issue 14): round trip, FedAvg, refusals and hostile blobs. Its helper
# torch_weights_peek.cpp reads integer buffers with libtorch directly, so it links libtorch too.
jf_add_unit_test(torch_weights
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/torch_weights_test.c
          ${PROJECT_SOURCE_DIR}/tests/unit/common/torch_weights_peek.cpp
  LIBS jf_torch jf_common ${TORCH_LIBRARIES} PkgConfig::ZLIB m)
separate_arguments(jf_torch_weights_cxx_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(torch_weights_test PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:${jf_torch_weights_cxx_flags}>)
set_target_properties(torch_weights_test PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
math(EXPR jf_torch_weights_timeout "90 * ${JF_TEST_TIMEOUT_SCALE}")
set_tests_properties(unit.torch_weights PROPERTIES TIMEOUT ${jf_torch_weights_timeout})
