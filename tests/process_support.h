#pragma once
// Helpers of the tests that run the bhviz executable (its path comes from the compile
// definition BHVIZ_EXE): temporary folders, whole-file reads, and a subprocess with its exit
// status and both output streams.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bhviz::test {

namespace fs = std::filesystem;

/// A fresh directory, removed with its contents when the guard goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("bhviz_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

inline std::string readText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Process {
  int status = -1;
  std::string out, err;
};

#ifdef BHVIZ_EXE
/// The bhviz executable: $BHVIZ_EXE when set (test binaries copied to another machine, as
/// scripts/gpu-check.sh does), else the one this build made.
inline std::string bhvizExecutable() {
  const char* moved = std::getenv("BHVIZ_EXE");
  return moved != nullptr && moved[0] != '\0' ? moved : BHVIZ_EXE;
}

/// XDG_CONFIG_HOME=DIR/config: a window run keeps its panels' layout there, not in the user's
/// own configuration (app/window/layout_file.h), so that runs do not see each other's layouts.
inline std::string freshConfig(const TempDir& dir) {
  return "XDG_CONFIG_HOME='" + (dir.path / "config").string() + "'";
}

/// Runs `env bhviz args` (shell-safe arguments: no quotes or spaces in paths), with a fresh
/// configuration directory unless `env` sets XDG_CONFIG_HOME.
inline Process runBhviz(const std::string& args, const std::string& env = "") {
  TempDir dir;
  const fs::path out = dir.path / "stdout", err = dir.path / "stderr";
  const std::string config =
      env.find("XDG_CONFIG_HOME=") == std::string::npos ? freshConfig(dir) + " " : "";
  const std::string cmd = config + env + (env.empty() ? "" : " ") + "'" + bhvizExecutable() + "' " +
                          args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int raw = std::system(cmd.c_str());
  Process p;
  p.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  p.out = readText(out);
  p.err = readText(err);
  return p;
}
#endif

}  // namespace bhviz::test
