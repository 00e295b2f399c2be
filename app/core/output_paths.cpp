#include "app/core/output_paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "app/core/cli_values.h"
#include "app/core/options.h"
#include "app/core/output.h"

namespace bhviz::app {

namespace {

// Why a file cannot be written, in the user's terms. The atomic write makes FILE.tmp, whose
// name is 4 bytes longer than FILE's.
std::string writeFailure(int error, bool viaTemporary = true) {
  if (error == ENAMETOOLONG) {
    return viaTemporary ? "the name is too long (at most " + std::to_string(NAME_MAX - 4) +
                              " bytes per file name, as FILE.tmp is written first)"
                        : "a name in it is too long (at most " + std::to_string(NAME_MAX) +
                              " bytes per directory name)";
  }
  return std::strerror(error);
}

}  // namespace

// Checked before the run, so that a typo in a path does not throw away a long run's results.
// The probe writes the very temporary file the atomic write will use, so permissions count.
void requireWritable(const std::string& option, const std::string& file) {
  namespace fs = std::filesystem;
  if (file.empty()) throw UsageError(option + ": the file name is empty");
  const fs::path path(file);
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    throw UsageError(option + " = " + quoted(file) + ": the directory " + quoted(parent.string()) +
                     " does not exist");
  }
  if (fs::is_directory(path, ec)) {
    throw UsageError(option + " = " + quoted(file) + " is a directory, not a file");
  }
  const fs::path probe = temporaryPathFor(path);
  const bool existed = fs::exists(probe, ec);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!existed) fs::remove(probe, ec);
  if (fd < 0) {
    throw UsageError(option + " = " + quoted(file) + ": cannot write it: " + writeFailure(error));
  }
}

// A directory an option will write into: an existing one we can write in, or one that can be
// made (its nearest existing ancestor is a directory we can write in). Nothing is created
// here: OutputSet::createDirectories does that once the whole command line is valid.
void requireDirectoryUsable(const std::string& option, const std::string& dir,
                            const char* sampleFile) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw UsageError(option + ": the directory name is empty");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw UsageError(option + " = " + quoted(dir) + " is not a directory");
    requireWritable(option, (fs::path(dir) / sampleFile).string());
    return;
  }
  for (const fs::path& part : fs::path(dir)) {
    if (part.native().size() > NAME_MAX) {
      throw UsageError(option + " = " + quoted(dir) +
                       ": cannot create the directory: " + writeFailure(ENAMETOOLONG, false));
    }
  }
  fs::path ancestor = fs::absolute(dir, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec) && ancestor != ancestor.root_path()) {
    ancestor = ancestor.parent_path();
  }
  if (!fs::is_directory(ancestor, ec)) {
    throw UsageError(option + " = " + quoted(dir) + ": cannot create the directory: " +
                     quoted(ancestor.string()) + " is not a directory");
  }
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    throw UsageError(option + " = " + quoted(dir) + ": cannot create the directory in " +
                     quoted(ancestor.string()) + ": " + std::strerror(errno));
  }
}

namespace {

std::filesystem::path normal(const std::string& p) {
  std::error_code ec;
  std::filesystem::path n = std::filesystem::weakly_canonical(std::filesystem::absolute(p), ec);
  return ec ? std::filesystem::absolute(p).lexically_normal() : n;
}

}  // namespace

void OutputSet::addInput(const std::string& option, const std::string& path) {
  add({option, path, normal(path), Kind::Input});
}

void OutputSet::addFile(const std::string& option, const std::string& path,
                        MayReplaceInput replace) {
  add({option, path, normal(path),
       replace == MayReplaceInput::Yes ? Kind::FileOverInput : Kind::File});
}

void OutputSet::addDirectory(const std::string& option, const std::string& dir,
                             const char* prefix) {
  add({option, dir, normal(dir), Kind::Directory, prefix});
}

void OutputSet::createDirectories() const {
  for (const Entry& e : m_entries) {
    if (e.kind != Kind::Directory) continue;
    std::error_code ec;
    std::filesystem::create_directories(e.path, ec);
    if (ec) {
      throw UsageError(e.option + " = " + quoted(e.typed) + ": cannot create the directory (" +
                       ec.message() + ")");
    }
  }
}

// Whether `file` is one of `dir`'s numbered files (or could be).
bool OutputSet::among(const Entry& file, const Entry& dir) {
  return file.kind != Kind::Directory && dir.kind == Kind::Directory &&
         file.path.parent_path() == dir.path &&
         file.path.filename().string().rfind(dir.prefix, 0) == 0;
}

bool OutputSet::clash(const Entry& a, const Entry& b) {
  if (a.kind == Kind::Input || b.kind == Kind::Input) {
    const Entry& other = a.kind == Kind::Input ? b : a;
    return other.kind != Kind::FileOverInput && a.path == b.path;
  }
  // Two directories may hold each other's numbered files (frame_*, snapshot_*).
  if (a.kind == Kind::Directory && b.kind == Kind::Directory) return false;
  return a.path == b.path || among(a, b) || among(b, a);
}

void OutputSet::add(const Entry& entry) {
  for (const Entry& e : m_entries) {
    if (!clash(entry, e)) continue;
    if (entry.kind == Kind::Input || e.kind == Kind::Input) {
      const Entry& input = entry.kind == Kind::Input ? entry : e;
      const Entry& output = entry.kind == Kind::Input ? e : entry;
      throw UsageError(output.option + " = " + quoted(output.typed) +
                       " would overwrite the snapshot read by " + input.option);
    }
    throw UsageError(entry.option + " = " + quoted(entry.typed) + " is also written by " +
                     e.option + ": every output needs a path of its own");
  }
  m_entries.push_back(entry);
}

}  // namespace bhviz::app
