// SPDX-License-Identifier: MIT
// Boost.Program_options value types commprof adds: byte sizes with K/M/G suffixes.
#pragma once

#include <boost/any.hpp>
#include <string>
#include <vector>

#include "src/core/units.hpp"

namespace commprof {

/// Found by Boost through argument-dependent lookup: lets `po::value<ByteSize>()` accept "4M".
/// A bad value raises a Boost validation error that names the option and says why.
void validate(boost::any& value, const std::vector<std::string>& tokens, ByteSize*, int);

}  // namespace commprof
