// SPDX-License-Identifier: MIT
// libFuzzer target: the pickle reader of Flight Recorder dumps (analysis/pickle_values). A dump
// may come from anywhere, so beyond "no crash, no sanitizer report":
//  - any bytes are either decoded or refused with commprof::Error naming the source (no other
//    exception escapes: no nlohmann error, no std::out_of_range);
//  - what is decoded is a JSON value whose text (invalid UTF-8 replaced) parses again.
#include <cstdint>
#include <string>

#include "analysis/pickle_values.hpp"
#include "src/core/errors.hpp"
#include "support/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  nlohmann::json value;
  try {
    value = commprof::read_pickle(bytes, "fuzz.pkl");
  } catch (const commprof::Error& e) {
    FUZZ_CHECK(std::string(e.what()).rfind("fuzz.pkl: ", 0) == 0, e.what());
    return 0;
  }
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  FUZZ_CHECK(!nlohmann::json::parse(text, nullptr, false).is_discarded(), text);
  return 0;
}
