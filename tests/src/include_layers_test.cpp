// SPDX-License-Identifier: MIT
// The layers' arrows point down (docs/ARCHITECTURE.md). A layer is a folder: CMake writes each
// layer's target, folder and linked targets into a manifest (commprof_write_layer_manifest in
// cmake/CommprofLayers.cmake), and this test takes a file's layer from its folder and the arrows
// from the links, so nothing here repeats the plan by hand. Every `#include "…"` of the product's
// sources must name a file of a layer the including file's layer links, directly or through
// others; an include it cannot place in a layer fails. The shared-layer build
// (COMMPROF_SHARED_LAYERS, the tsan preset) catches calls that run back up at link time; this
// catches headers, whose inline code and types never reach the linker. ARCHITECTURE.md's layer
// table must say what the manifest says, and a folder's README.md (analysis/, workloads/) must
// name every source file under it and every layer folder below it, and no file that is not there.
//
// Above the layers stand the floors: the product's top-level folders, in a fixed order (src/
// lowest, then collectives/, analysis/, workloads/; docs/ARCHITECTURE.md, "The floors"). Neither
// an include nor a link may run up a floor, whatever the layers link, but for the program's entry
// point, src/program/, which composes every command.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace commprof {
namespace {

namespace fs = std::filesystem;

struct Layer {
  std::string folder;
  std::vector<std::string> links;  ///< the layers it links directly (commprof_ prefix dropped)
};

struct Plan {
  std::map<std::string, Layer> layers;  ///< by name: the target without "commprof_"
  std::set<std::string> tool_folders;   ///< folders of tools, above every layer
  std::map<std::string, std::string> layer_of_folder;
};

std::string layer_name(const std::string& target) {
  const std::string prefix = "commprof_";
  return target.rfind(prefix, 0) == 0 ? target.substr(prefix.size()) : target;
}

const Plan& plan() {
  static const Plan p = [] {
    Plan out;
    std::ifstream in(COMMPROF_LAYER_MANIFEST);
    EXPECT_TRUE(in) << "cannot read the layer manifest " << COMMPROF_LAYER_MANIFEST;
    std::map<std::string, std::vector<std::string>> linked_targets;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string kind, target, folder;
      if (!(words >> kind >> target >> folder) || kind[0] == '#') continue;
      if (kind == "tool") {
        out.tool_folders.insert(folder);
        continue;
      }
      EXPECT_EQ(kind, "layer") << line;
      const std::string name = layer_name(target);
      out.layers[name].folder = folder;
      out.layer_of_folder[folder] = name;
      for (std::string t; words >> t;) linked_targets[name].push_back(t);
    }
    // Links to what is not a layer (MPI, Boost, the warnings target) are no arrows.
    for (auto& [name, layer] : out.layers) {
      for (const std::string& t : linked_targets[name]) {
        const std::string l = layer_name(t);
        if (t != l && out.layers.count(l)) layer.links.push_back(l);
      }
    }
    return out;
  }();
  return p;
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// The top-level folders, lowest floor first: a file may include, and a layer link, only its own
/// floor and those below.
const std::vector<std::string> kFloors = {"src", "collectives", "analysis", "workloads"};
/// The program's entry point, the composition root: the one folder that reaches every floor.
const std::string kEntryPoint = "src/program";

/// The floor of a file or folder (its index in kFloors), or -1 outside them.
int floor_of(const std::string& path) {
  const std::string top = path.substr(0, path.find('/'));
  const auto it = std::find(kFloors.begin(), kFloors.end(), top);
  return it == kFloors.end() ? -1 : static_cast<int>(it - kFloors.begin());
}

bool in_entry_point(const std::string& path) {
  return path == kEntryPoint || path.rfind(kEntryPoint + "/", 0) == 0;
}

/// Why `from` (a file or a layer's folder) may not reach `to` across the floors; "" if it may.
std::string floor_problem(const std::string& from, const std::string& to) {
  const int f = floor_of(from), t = floor_of(to);
  if (f < 0 || t < 0 || t <= f || in_entry_point(from)) return "";
  return kFloors[static_cast<std::size_t>(f)] + "/ lies below " +
         kFloors[static_cast<std::size_t>(t)] + "/: only " + kEntryPoint + "/ reaches up";
}

struct Include {
  std::string file;
  int line = 0;
  std::string included;  ///< as written: relative to the repository root
};

/// Every `#include "…"` of the file at `path` (relative to the repository root).
std::vector<Include> includes_of(const std::string& path) {
  static const std::regex include_line("^\\s*#\\s*include\\s+\"([^\"]+)\"");
  std::vector<Include> out;
  std::ifstream in(fs::path(COMMPROF_SOURCE_DIR) / path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (std::regex_search(line, m, include_line)) out.push_back({path, number, m[1].str()});
  }
  return out;
}

/// The includes among `includes` that run up a floor, one message each.
std::vector<std::string> upward_includes(const std::vector<Include>& includes) {
  std::vector<std::string> out;
  for (const Include& i : includes) {
    const std::string why = floor_problem(i.file, i.included);
    if (!why.empty()) {
      out.push_back(i.file + ":" + std::to_string(i.line) + " includes " + i.included + ": " + why);
    }
  }
  return out;
}

/// Every layer `layer` may include: itself and all it reaches through the arrows.
std::set<std::string> reachable(const std::string& layer) {
  std::set<std::string> seen = {layer};
  std::vector<std::string> todo = {layer};
  while (!todo.empty()) {
    const std::string l = todo.back();
    todo.pop_back();
    for (const std::string& next : plan().layers.at(l).links) {
      if (seen.insert(next).second) todo.push_back(next);
    }
  }
  return seen;
}

std::vector<std::string> product_sources() {
  std::vector<std::string> out;
  const fs::path root = COMMPROF_SOURCE_DIR;
  for (const std::string& top : kFloors) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu")) {
        out.push_back(fs::relative(e.path(), root).generic_string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(IncludeLayers, TheManifestHoldsEveryLayer) {
  // A manifest that lost its layers would pass every other test here.
  EXPECT_GE(plan().layers.size(), 20u);
  for (const char* layer :
       {"core", "timeline", "backend", "host", "cuda", "analysis", "report", "command_list"}) {
    EXPECT_EQ(plan().layers.count(layer), 1u) << layer;
  }
}

TEST(IncludeLayers, EveryProductFileLiesInTheFolderOfALayerOrATool) {
  for (const std::string& path : product_sources()) {
    const std::string folder = folder_of(path);
    EXPECT_TRUE(plan().layer_of_folder.count(folder) || plan().tool_folders.count(folder))
        << path << ": its folder " << folder
        << " is no layer's; declare one there with commprof_add_layer";
  }
}

TEST(IncludeLayers, ThePlanHasNoCycle) {
  for (const auto& [name, layer] : plan().layers) {
    for (const std::string& below : layer.links) {
      EXPECT_EQ(reachable(below).count(name), 0u)
          << name << " and " << below << " reach each other";
    }
  }
}

TEST(IncludeLayers, IncludesPointDown) {
  std::size_t checked = 0;
  for (const std::string& path : product_sources()) {
    const std::string folder = folder_of(path);
    const bool tool = plan().tool_folders.count(folder) > 0;
    const auto from = plan().layer_of_folder.find(folder);
    if (!tool && from == plan().layer_of_folder.end()) continue;  // the test above names it
    const std::set<std::string> allowed = tool ? std::set<std::string>{} : reachable(from->second);
    for (const Include& include : includes_of(path)) {
      const int number = include.line;
      const std::string& included = include.included;
      const std::string to_folder = folder_of(included);
      const auto to = plan().layer_of_folder.find(to_folder);
      ++checked;
      if (tool) {
        // Tools stand above every layer: any layer, or their own folder.
        EXPECT_TRUE(to != plan().layer_of_folder.end() || to_folder == folder)
            << path << ":" << number << " includes " << included << ", in no layer";
        continue;
      }
      if (to == plan().layer_of_folder.end()) {
        ADD_FAILURE() << path << ":" << number << " (" << from->second << ") includes " << included
                      << ", which lies in no layer's folder (include paths are "
                      << "relative to the repository root; generated files to their folder)";
        continue;
      }
      EXPECT_EQ(allowed.count(to->second), 1u)
          << path << ":" << number << " (" << from->second << ") includes " << included << " ("
          << to->second << "), a layer it does not link";
    }
  }
  EXPECT_GT(checked, 300u) << "the scan found too few includes: wrong source directory?";
}

TEST(IncludeLayers, IncludesKeepTheFloors) {
  std::vector<Include> includes;
  for (const std::string& path : product_sources()) {
    for (Include& i : includes_of(path)) includes.push_back(std::move(i));
  }
  ASSERT_GT(includes.size(), 300u) << "the scan found too few includes: wrong source directory?";
  for (const std::string& problem : upward_includes(includes)) ADD_FAILURE() << problem;
}

TEST(IncludeLayers, AnIncludeUpAFloorIsRefused) {
  // Made-up files: each include up a floor is named, those down or level pass, and so does the
  // entry point's reach up (as src/program/command_list.cpp's).
  const std::vector<Include> includes = {
      {"src/nccl_profiler/plugin.cpp", 3, "collectives/spec.hpp"},       // up one floor
      {"collectives/bench/bench.cpp", 4, "analysis/reducer.hpp"},        // up one floor
      {"analysis/reducer.cpp", 5, "workloads/op_plan.hpp"},              // up one floor
      {"src/core/log.cpp", 6, "workloads/workload.hpp"},                 // up three floors
      {"workloads/prediction/x.cpp", 7, "analysis/graph/graph.hpp"},     // down
      {"analysis/reducer.cpp", 8, "src/timeline/rank_file.hpp"},         // down
      {"collectives/routing.cpp", 9, "collectives/routing.hpp"},         // level
      {"src/program/command_list.cpp", 10, "workloads/commands/c.hpp"},  // the entry point
      {"src/programs/x.cpp", 11, "analysis/report.hpp"},                 // not the entry point
      {"analysis/tools/gen.cpp", 12, "analysis_build_config.hpp"},       // outside the floors
  };
  const std::vector<std::string> want = {
      "src/nccl_profiler/plugin.cpp:3 includes collectives/spec.hpp: src/ lies below "
      "collectives/: only src/program/ reaches up",
      "collectives/bench/bench.cpp:4 includes analysis/reducer.hpp: collectives/ lies below "
      "analysis/: only src/program/ reaches up",
      "analysis/reducer.cpp:5 includes workloads/op_plan.hpp: analysis/ lies below workloads/: "
      "only src/program/ reaches up",
      "src/core/log.cpp:6 includes workloads/workload.hpp: src/ lies below workloads/: only "
      "src/program/ reaches up",
      "src/programs/x.cpp:11 includes analysis/report.hpp: src/ lies below analysis/: only "
      "src/program/ reaches up",
  };
  EXPECT_EQ(upward_includes(includes), want);
}

TEST(IncludeLayers, LinksKeepTheFloors) {
  // A link up a floor would let the include above pass the layer check: refused here too.
  for (const auto& [name, layer] : plan().layers) {
    for (const std::string& below : layer.links) {
      const std::string why = floor_problem(layer.folder, plan().layers.at(below).folder);
      EXPECT_EQ(why, "") << "commprof_" << name << " (" << layer.folder << "/) links commprof_"
                         << below << " (" << plan().layers.at(below).folder << "/)";
    }
  }
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" `");
  const auto e = s.find_last_not_of(" `");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// ARCHITECTURE.md's table: | `commprof_<layer>` | `<folder>/` | holds | <layers>; <others> |.
TEST(IncludeLayers, TheArchitectureTableIsTheManifest) {
  std::ifstream in(fs::path(COMMPROF_SOURCE_DIR) / "docs" / "ARCHITECTURE.md");
  ASSERT_TRUE(in);
  const std::regex row("^\\| `commprof_([a-z_]+)` \\| `([a-z_/]+)/` \\|.*\\| ([^|]*) \\|$");
  std::map<std::string, Layer> documented;
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    Layer& l = documented[m[1].str()];
    l.folder = m[2].str();
    const std::string links = m[3].str();
    std::istringstream layers(links.substr(0, links.find(';')));
    for (std::string name; std::getline(layers, name, ',');) {
      name = trim(name);
      if (!name.empty() && name != "—") l.links.push_back(name);
    }
  }
  for (const auto& [name, layer] : plan().layers) {
    const auto d = documented.find(name);
    if (d == documented.end()) {
      ADD_FAILURE() << "docs/ARCHITECTURE.md has no row for commprof_" << name;
      continue;
    }
    EXPECT_EQ(d->second.folder, layer.folder) << "the folder of commprof_" << name;
    std::vector<std::string> want = layer.links, got = d->second.links;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "the layers commprof_" << name << " links";
  }
  for (const auto& [name, layer] : documented) {
    EXPECT_EQ(plan().layers.count(name), 1u)
        << "docs/ARCHITECTURE.md names commprof_" << name << ", which is no layer";
  }
}

// A README's names: its `code` spans. A name matches a file's path below the README's folder, or
// its file name, with `*` standing for any run of characters ("report_*.cpp", "step_builder.*").
bool glob_match(const char* pattern, const char* text) {
  if (*pattern == '\0') return *text == '\0';
  if (*pattern == '*') {
    for (const char* t = text;; ++t) {
      if (glob_match(pattern + 1, t)) return true;
      if (*t == '\0') return false;
    }
  }
  return *pattern == *text && glob_match(pattern + 1, text + 1);
}

std::vector<std::string> readme_names(const fs::path& readme) {
  std::ifstream in(readme);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::regex code("`([^`\\n]+)`");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(all.begin(), all.end(), code); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

bool names_file(const std::vector<std::string>& names, const std::string& below) {
  const std::string file = below.substr(below.rfind('/') + 1);
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    return glob_match(n.c_str(), below.c_str()) || glob_match(n.c_str(), file.c_str());
  });
}

// The folders whose README.md maps them: the layers' and tools' folders that hold one.
std::vector<std::string> mapped_folders() {
  std::set<std::string> folders(plan().tool_folders.begin(), plan().tool_folders.end());
  for (const auto& [name, layer] : plan().layers) folders.insert(layer.folder);
  std::vector<std::string> out;
  for (const std::string& f : folders) {
    if (fs::exists(fs::path(COMMPROF_SOURCE_DIR) / f / "README.md")) out.push_back(f);
  }
  return out;
}

TEST(IncludeLayers, EachFolderReadmeNamesItsFilesAndLayers) {
  const std::vector<std::string> folders = mapped_folders();
  EXPECT_GE(folders.size(), 2u) << "analysis/README.md and workloads/README.md not found";
  for (const std::string& folder : folders) {
    const std::string readme = folder + "/README.md";
    const std::vector<std::string> names = readme_names(fs::path(COMMPROF_SOURCE_DIR) / readme);
    const std::string prefix = folder + "/";
    std::vector<std::string> files;
    for (const std::string& path : product_sources()) {
      if (path.rfind(prefix, 0) == 0) files.push_back(path.substr(prefix.size()));
    }
    for (const std::string& below : files) {
      EXPECT_TRUE(names_file(names, below)) << readme << " does not name " << below;
    }
    // Every layer (or tool) folder below: named as `sub/`, or as the folder of a path.
    std::set<std::string> subfolders(plan().tool_folders.begin(), plan().tool_folders.end());
    for (const auto& [name, layer] : plan().layers) subfolders.insert(layer.folder);
    for (const std::string& sub : subfolders) {
      if (sub.rfind(prefix, 0) != 0) continue;
      const std::string rel = sub.substr(prefix.size()) + "/";
      const bool named = std::any_of(names.begin(), names.end(),
                                     [&](const std::string& n) { return n.rfind(rel, 0) == 0; });
      EXPECT_TRUE(named) << readme << " does not name its layer folder " << rel;
    }
    // A source-file name must still name a file (below the folder, or a path from the
    // repository's root): renamed or removed files leave the map.
    const std::regex source_name("^[A-Za-z0-9_/*]+\\.(cpp|hpp|cu|\\*)$");
    for (const std::string& n : names) {
      if (!std::regex_match(n, source_name)) continue;
      const bool found =
          std::any_of(files.begin(), files.end(),
                      [&](const std::string& below) { return names_file({n}, below); }) ||
          fs::is_regular_file(fs::path(COMMPROF_SOURCE_DIR) / n);
      EXPECT_TRUE(found) << readme << " names " << n << ", which is no source file under " << folder
                         << "/";
    }
  }
}

TEST(IncludeLayers, ReadmeNamesMatchFilesByGlob) {
  EXPECT_TRUE(glob_match("report_*.cpp", "report_csv.cpp"));
  EXPECT_TRUE(glob_match("step_builder.*", "step_builder.hpp"));
  EXPECT_TRUE(glob_match("nsys_rules*", "nsys_rules_default.txt"));
  EXPECT_FALSE(glob_match("report_*.cpp", "report_writers.hpp"));
  EXPECT_FALSE(glob_match("layout.*", "layout_test.cpp"));
  EXPECT_TRUE(names_file({"projection/source_runs.*"}, "projection/source_runs.cpp"));
  EXPECT_TRUE(names_file({"chrome_trace.*"}, "report/chrome_trace.hpp"));
  EXPECT_FALSE(names_file({"projection/source_runs.*"}, "projection/run_sources.cpp"));
}

}  // namespace
}  // namespace commprof
