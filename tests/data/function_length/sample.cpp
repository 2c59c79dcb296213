// SPDX-License-Identifier: MIT
// Known lengths, counted by hand, for tests/scripts/CMakeLists.txt: four function bodies,
// `six_lines` (lines 11-16), the constructor `Widget` (26-30), `area` (31-35) and
// `six_with_a_block` (39-44); the table, the strings, the character literal, the comment and the
// raw string hold braces that are no code.
#include <map>
#include <string>

namespace sample {

int six_lines(int a) {
  const char* brace = "}}}";  // a string's braces are no code: }
  const char open = '{';
  const int big = 1'000'000;
  return a + brace[0] + open + big;
}

const std::map<std::string, int> kTable = {
    {"a", 1},
    {"b", 2},
    {"c", 3},
    {"d", 4},
};

struct Widget {
  Widget(int w, int h) : w_{w}, h_(h) {
    w_ += 1;
    h_ += 1;
    w_ *= 2;
  }
  int area() const {
    /* { an unmatched brace in a comment */
    const auto text = R"(})";
    return w_ * h_ + static_cast<int>(sizeof text);
  }
  int w_, h_;
};

int six_with_a_block(int a) {
  if (a > 0) {
    return 1;
  }
  return 0;
}

}  // namespace sample
