// SPDX-License-Identifier: MIT
// libFuzzer target: the rules-file parser of `commprof import-nsys --rules FILE`
// (analysis/nsys_rules). Properties, beyond "no crash, no sanitizer report":
//  - any text is either parsed or refused with commprof::Error naming the source and, for a bad
//    rule, its line (no other exception, no std::regex_error escaping);
//  - what is parsed prints back as rules text (as --print-rules shows them) that parses to the
//    same rules;
//  - rules apply in order: for activities of every kind, a catch-all rule appended after the
//    last changes the class of none that an earlier rule matches, and decides each that none
//    matches.
#include <cstdint>
#include <string>

#include "analysis/nsys_rules.hpp"
#include "src/core/errors.hpp"
#include "support/fuzz_check.hpp"

namespace commprof {
namespace {

std::string print(const Rule& r) {
  std::string out = std::string(rule_class_name(r.cls)) + " ";
  switch (r.matcher) {
    case Rule::Matcher::kStream:
      return out + "stream " + category_name(r.category);
    case Rule::Matcher::kRange:
      return out + "range " + category_name(r.category);
    case Rule::Matcher::kKind:
      return out + "kind " + activity_kind_name(r.kind);
    case Rule::Matcher::kName:
      return out + "name " + r.pattern;
    case Rule::Matcher::kAny:
      return out + "any";
  }
  return out;
}

bool same(const Rule& a, const Rule& b) {
  if (a.cls != b.cls || a.matcher != b.matcher) return false;
  switch (a.matcher) {
    case Rule::Matcher::kStream:
    case Rule::Matcher::kRange:
      return a.category == b.category;
    case Rule::Matcher::kKind:
      return a.kind == b.kind;
    case Rule::Matcher::kName:
      return a.pattern == b.pattern;
    case Rule::Matcher::kAny:
      return true;
  }
  return false;
}

// Short names: a user's regular expression may backtrack exponentially on a long name, which is
// the user's to avoid (as with grep); the parser and the matcher logic are what is fuzzed here.
ActivityFacts facts(ActivityKind kind, const char* name, std::uint8_t marks,
                    std::optional<Category> range) {
  ActivityFacts a;
  a.kind = kind;
  a.name = name;
  a.stream_marks = marks;
  a.range = range;
  return a;
}

}  // namespace
}  // namespace commprof

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commprof;
  const std::string text(reinterpret_cast<const char*>(data), size);
  RuleSet set;
  try {
    set = RuleSet::parse(text, "fuzz.rules");
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).rfind("fuzz.rules:", 0) == 0, e.what());
    return 0;
  }
  FUZZ_CHECK(!set.rules().empty(), "parsed to no rules");
  std::string printed;
  int last_line = 0;
  for (const Rule& r : set.rules()) {
    FUZZ_CHECK(r.line > last_line, "rules out of line order");
    last_line = r.line;
    FUZZ_CHECK(r.matcher != Rule::Matcher::kName || r.regex != nullptr, "name rule without regex");
    printed += print(r) + "\n";
  }
  RuleSet again;
  try {
    again = RuleSet::parse(printed, "printed.rules");
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("printed rules do not parse: ") + e.what() + "\n" + printed);
  }
  FUZZ_CHECK(again.rules().size() == set.rules().size(), "printed rules differ:\n" + printed);
  for (std::size_t i = 0; i < set.rules().size(); ++i) {
    FUZZ_CHECK(same(set.rules()[i], again.rules()[i]), "rule " + print(set.rules()[i]));
  }

  constexpr auto kCommStream = static_cast<std::uint8_t>(1u << static_cast<int>(Category::kComm));
  for (const ActivityFacts& a :
       {facts(ActivityKind::kKernel, "ncclDevKernel_AllReduce", 0, std::nullopt),
        facts(ActivityKind::kMemcpy, "Memcpy DtoD", kCommStream, std::nullopt),
        facts(ActivityKind::kMemset, "Memset", 0, Category::kComp),
        facts(ActivityKind::kKernel, "", 7, Category::kMem)}) {
    // Rules are tried in order: a rule added after the last one changes nothing for an activity
    // an earlier rule matches, and decides only the ones none matches.
    bool matched = false;
    for (const Rule& r : set.rules()) matched = matched || r.matches(a);
    for (const char* tail : {"IGNORE any", "COMM any", "MEM any"}) {
      const RuleSet longer = RuleSet::parse(printed + tail + "\n", "longer.rules");
      if (matched) {
        FUZZ_CHECK(longer.classify(a) == set.classify(a),
                   std::string("a rule after the last, ") + tail + ", changed a matched activity");
      } else {
        FUZZ_CHECK(longer.classify(a) == longer.rules().back().cls,
                   std::string("an unmatched activity did not fall to the added ") + tail);
      }
    }
  }
  return 0;
}
