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
  for (const char* top : {"src", "collectives", "workloads", "analysis"}) {
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
  const std::regex include_line("^\\s*#\\s*include\\s+\"([^\"]+)\"");
  std::size_t checked = 0;
  for (const std::string& path : product_sources()) {
    const std::string folder = folder_of(path);
    const bool tool = plan().tool_folders.count(folder) > 0;
    const auto from = plan().layer_of_folder.find(folder);
    if (!tool && from == plan().layer_of_folder.end()) continue;  // the test above names it
    const std::set<std::string> allowed = tool ? std::set<std::string>{} : reachable(from->second);
    std::ifstream in(fs::path(COMMPROF_SOURCE_DIR) / path);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string included = m[1].str();
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
