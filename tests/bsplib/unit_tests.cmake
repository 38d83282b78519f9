# GoogleTest unit tests of bsplib's internals (registration table, agreement, stream records,
# message queue, checkpoint file formats, the choice of copy, where checkpoint copies go, lent pages,
# cutting connections to a frozen host).
include(GoogleTest)
add_executable(bsplib_unit_tests unit_registry.cpp unit_agreement.cpp unit_records.cpp unit_queue.cpp
  unit_shard.cpp unit_copy.cpp unit_copy_holders.cpp unit_lending.cpp unit_cut_links.cpp)
target_link_libraries(bsplib_unit_tests PRIVATE bspg_internal GTest::gtest_main)
gtest_discover_tests(bsplib_unit_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 60)
