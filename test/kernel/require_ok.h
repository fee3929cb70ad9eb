// REQUIRE_OK(result): a Result/Status must be ok; on failure the error's
// message and details are printed.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#define REQUIRE_OK(expr)                                                                          \
  do {                                                                                            \
    const auto& ecni_r_ = (expr);                                                                 \
    INFO((ecni_r_.ok() ? std::string() : ecni_r_.error().msg + " | " + ecni_r_.error().details)); \
    REQUIRE(ecni_r_.ok());                                                                        \
  } while (0)
