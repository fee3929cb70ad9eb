// The Catch2 main for every unit test.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
