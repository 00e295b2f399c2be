#pragma once
// The command line's output paths: each checked writable before any work (the very temporary
// file the atomic write will use is probed), and all of them checked as a set (OutputSet).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bhviz::app {

/// Throws UsageError unless `file` can be written (its directory exists, it is no directory,
/// FILE.tmp can be created there, its name is not too long).
void requireWritable(const std::string& option, const std::string& file);

/// Throws UsageError unless `dir` is a directory `sampleFile` can be written in, or can be made
/// (its nearest existing ancestor is a directory we can write in). Creates nothing.
void requireDirectoryUsable(const std::string& option, const std::string& dir,
                            const char* sampleFile);

// Every output of a run, checked as a set: two options writing one path would leave only the
// last one's content, and an output over the --load file would replace the user's snapshot,
// so those are refused; directories are created only after every option has been checked, so
// that a mistake later on the line leaves nothing behind.
class OutputSet {
 public:
  /// --save may write the state back over the snapshot it was loaded from; nothing else may.
  enum class MayReplaceInput { No, Yes };

  void addInput(const std::string& option, const std::string& path);
  void addFile(const std::string& option, const std::string& path,
               MayReplaceInput replace = MayReplaceInput::No);
  /// A directory of numbered files whose names start with `prefix` ("frame_").
  void addDirectory(const std::string& option, const std::string& dir, const char* prefix);
  /// Makes the directories added; throws UsageError naming the option when one cannot be.
  void createDirectories() const;

 private:
  enum class Kind { Input, File, FileOverInput, Directory };
  struct Entry {
    std::string option, typed;
    std::filesystem::path path;  // absolute, symbolic links of existing parts resolved
    Kind kind;
    const char* prefix = "";  // a directory's numbered files start with this
  };

  static bool among(const Entry& file, const Entry& dir);
  static bool clash(const Entry& a, const Entry& b);
  void add(const Entry& entry);

  std::vector<Entry> m_entries;
};

}  // namespace bhviz::app
