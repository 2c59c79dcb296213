// SPDX-License-Identifier: MIT
// Classification rules of `commprof import-nsys`: an ordered table kept as data
// (analysis/nsys_rules_default.txt, compiled in; `--rules FILE` replaces it). The file format is
// documented at the top of the default file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "src/timeline/category.hpp"

namespace commprof {

/// What a rule decides for a matching activity.
enum class RuleClass : std::uint8_t { kComm, kMem, kComp, kIgnore };
const char* rule_class_name(RuleClass c);

/// The GPU activity kinds the importer reads.
enum class ActivityKind : std::uint8_t { kKernel, kMemcpy, kMemset };
const char* activity_kind_name(ActivityKind k);

/// What the classifier knows about one GPU activity.
struct ActivityFacts {
  ActivityKind kind = ActivityKind::kKernel;
  std::string name;  ///< kernel short name, "Memcpy DtoD", "Memset"
  /// Bit index_of(Category) set when commprof's NVTX ranges of that category launched work onto
  /// the activity's stream.
  std::uint8_t stream_marks = 0;
  /// The category of the innermost commprof NVTX op range around the launch, if any.
  std::optional<Category> range;
};

struct Rule {
  enum class Matcher : std::uint8_t { kStream, kRange, kKind, kName, kAny };
  RuleClass cls = RuleClass::kComp;
  Matcher matcher = Matcher::kAny;
  Category category = Category::kComp;        ///< kStream, kRange
  ActivityKind kind = ActivityKind::kKernel;  ///< kKind
  std::string pattern;                        ///< kName, as written
  std::shared_ptr<const std::regex> regex;    ///< kName
  int line = 0;
  bool matches(const ActivityFacts& a) const;
};

class RuleSet {
 public:
  /// Parses rules text; throws Error naming `source`, the line and the problem.
  static RuleSet parse(const std::string& text, const std::string& source);
  static RuleSet from_file(const std::string& path);
  /// The compiled-in analysis/nsys_rules_default.txt.
  static const RuleSet& defaults();
  static const char* default_text();

  /// The class of the first matching rule; kIgnore when none matches.
  RuleClass classify(const ActivityFacts& a) const;
  const std::vector<Rule>& rules() const { return rules_; }
  const std::string& source() const { return source_; }

 private:
  std::vector<Rule> rules_;
  std::string source_;
};

}  // namespace commprof
