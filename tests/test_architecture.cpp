// The house rules of docs/ARCHITECTURE.md, held against the sources: sim/ knows nothing of GL or
// the app, render/ nothing of physics, and the app reaches the simulation only through
// sim::Backend — it never asks which backend runs (no name comparisons, no casts), never reads
// the tree's layout, and only the backend selection and the CUDA–GL bridge name sim/cuda.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = BHVIZ_SOURCE_DIR;

struct Source {
  std::string path;  ///< relative to the repository, with '/'
  std::string text;  ///< comments removed: a rule is about code, not about prose
};

// Line comments and block comments out, string literals kept (includes are strings).
std::string withoutComments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  bool inString = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (inString) {
      out += s[i];
      if (s[i] == '\\' && i + 1 < s.size())
        out += s[++i];
      else if (s[i] == '"')
        inString = false;
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
      out += '\n';
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 1;
    } else {
      if (s[i] == '"') inString = true;
      out += s[i];
    }
  }
  return out;
}

std::vector<Source> sourcesUnder(const std::string& folder) {
  std::vector<Source> out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / folder)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) {
      continue;
    }
    std::ifstream f(e.path());
    std::ostringstream text;
    text << f.rdbuf();
    out.push_back({fs::relative(e.path(), kRoot).generic_string(), withoutComments(text.str())});
  }
  EXPECT_FALSE(out.empty()) << "no sources under " << folder;
  return out;
}

/// Every (file, line) of `sources` that matches `pattern`, except the files in `allowed`.
std::vector<std::string> offences(const std::vector<Source>& sources, const std::string& pattern,
                                  const std::vector<std::string>& allowed = {}) {
  const std::regex re(pattern);
  std::vector<std::string> found;
  for (const Source& s : sources) {
    bool exempt = false;
    for (const std::string& a : allowed) exempt = exempt || s.path.find(a) != std::string::npos;
    if (exempt) continue;
    std::istringstream lines(s.text);
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (std::regex_search(line, re))
        found.push_back(s.path + ":" + std::to_string(number) + ": " + line);
    }
  }
  return found;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += "\n  " + s;
  return out;
}

TEST(Architecture, TheAppNeverAsksWhichBackendRuns) {
  const auto app = sourcesUnder("app");
  EXPECT_EQ(join(offences(app, R"(name\(\)\s*[!=]=|[!=]=\s*\S*name\(\)|traits\(\)\.name)")), "")
      << "compare no backend names: ask sim::Backend::traits()";
  EXPECT_EQ(join(offences(app, R"(dynamic_cast\s*<)")), "") << "cast no backend";
  EXPECT_EQ(join(offences(app, R"(\bCpuBackend\b|cpu_backend\.h|\bCudaBackend\b)")), "");
}

TEST(Architecture, TheAppNeverReadsTheTreesLayout) {
  const auto app = sourcesUnder("app");
  EXPECT_EQ(
      join(offences(app, R"(sim::Tree\b|sim::Groups\b|levelBegin|sim/tree\.h|\.childCount\b)")), "")
      << "what the app draws of the tree, the backend exports (sim/common/draw.h, "
         "sim/cpu/walk_inspect.h's GroupWalk)";
}

TEST(Architecture, OnlyTheBackendChoiceAndTheBridgeNameSimCuda) {
  const auto app = sourcesUnder("app");
  EXPECT_EQ(join(offences(app, R"(#include\s+"sim/cuda/)", {"backend_select.", "cuda_gl_bridge."})),
            "");
  EXPECT_EQ(join(offences(app, R"(sim::cuda::)", {"backend_select.", "cuda_gl_bridge."})), "");
}

TEST(Architecture, ModulesIncludeOnlyDownwards) {
  const auto sim = sourcesUnder("sim");
  const auto render = sourcesUnder("render");
  EXPECT_EQ(join(offences(sim, R"(#include\s+["<](app/|render/|GLFW|imgui|glad|GL/|EGL/))")), "")
      << "sim/ knows nothing of GL, the window or the app";
  EXPECT_EQ(join(offences(render, R"(#include\s+["<](app/|sim/|cuda))")), "")
      << "render/ knows nothing of physics or CUDA";
  EXPECT_EQ(join(offences(sim, R"(#include\s+<cuda)", {"sim/cuda/"})), "")
      << "<cuda_runtime.h> only under sim/cuda/";
  EXPECT_EQ(join(offences(sim, R"(#include\s+<mpi\.h>)", {"sim/dist/"})), "")
      << "MPI lives in sim/dist/ only";
  const auto app = sourcesUnder("app");
  EXPECT_EQ(join(offences(app, R"(#include\s+<mpi\.h>|\bMPI_)")), "")
      << "MPI lives in sim/dist/ only";
  // The app meets the distributed backend where it meets any backend: the backend choice, and
  // main (the job's start and end).
  EXPECT_EQ(join(offences(app, R"(sim::dist::)", {"backend_select.", "app/main.cpp"})), "");
}

}  // namespace
