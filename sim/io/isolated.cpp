#include "sim/io/isolated.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <new>
#include <string>
#include <vector>

namespace bhviz::sim::io {

namespace {

// What the child answers: one tag byte, then a snapshot or an error message.
constexpr char kSnapshot = 'S';
constexpr char kError = 'E';

bool writeAll(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t k = ::write(fd, p, bytes);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    bytes -= static_cast<std::size_t>(k);
  }
  return true;
}

/// Reads exactly `bytes`; false at an early end of the pipe.
bool readAll(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t k = ::read(fd, p, bytes);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    bytes -= static_cast<std::size_t>(k);
  }
  return true;
}

template <typename T>
bool writeArray(int fd, const std::vector<T>& v) {
  return writeAll(fd, v.data(), v.size() * sizeof(T));
}
template <typename T>
bool readArray(int fd, std::vector<T>& v) {
  return readAll(fd, v.data(), v.size() * sizeof(T));
}

// A string as its length and bytes; the parent takes at most kMaxText bytes.
constexpr std::uint64_t kMaxText = 1u << 16;
constexpr std::uint64_t kMaxNotes = 64;

bool writeText(int fd, const std::string& text) {
  const std::uint64_t length = text.size();
  return writeAll(fd, &length, sizeof length) && writeAll(fd, text.data(), text.size());
}
bool readText(int fd, std::string& text) {
  std::uint64_t length = 0;
  if (!readAll(fd, &length, sizeof length) || length > kMaxText) return false;
  text.resize(length);
  return readAll(fd, text.data(), length);
}

bool writeNotes(int fd, const std::vector<std::string>& notes) {
  const std::uint64_t count = notes.size();
  if (!writeAll(fd, &count, sizeof count)) return false;
  for (const std::string& note : notes) {
    if (!writeText(fd, note)) return false;
  }
  return true;
}
bool readNotes(int fd, std::vector<std::string>& notes) {
  std::uint64_t count = 0;
  if (!readAll(fd, &count, sizeof count) || count > kMaxNotes) return false;
  notes.resize(count);
  for (std::string& note : notes) {
    if (!readText(fd, note)) return false;
  }
  return true;
}

void answer(int fd, const Snapshot& s) {
  const Particles& p = s.particles;
  const std::uint64_t n = p.size();
  const bool ok = writeAll(fd, &kSnapshot, 1) && writeAll(fd, &s.time, sizeof s.time) &&
                  writeAll(fd, &n, sizeof n) && writeArray(fd, p.posMass) &&
                  writeArray(fd, p.vel) && writeArray(fd, p.accPot) && writeArray(fd, p.id) &&
                  writeArray(fd, p.tag) && writeArray(fd, p.bin) && writeNotes(fd, s.notes);
  ::_exit(ok ? 0 : 3);
}

void answerError(int fd, const std::string& message) {
  const bool ok = writeAll(fd, &kError, 1) && writeText(fd, message.substr(0, kMaxText));
  ::_exit(ok ? 0 : 3);
}

/// What the parent reads; false when the child stopped before a whole answer.
bool receive(int fd, Snapshot& s, std::string& error) {
  char tag = 0;
  if (!readAll(fd, &tag, 1)) return false;
  if (tag == kError) return readText(fd, error);
  std::uint64_t n = 0;
  if (tag != kSnapshot || !readAll(fd, &s.time, sizeof s.time) || !readAll(fd, &n, sizeof n) ||
      n > kMaxSnapshotParticles) {
    return false;
  }
  Particles& p = s.particles;
  p.resize(n);
  return readArray(fd, p.posMass) && readArray(fd, p.vel) && readArray(fd, p.accPot) &&
         readArray(fd, p.id) && readArray(fd, p.tag) && readArray(fd, p.bin) &&
         readNotes(fd, s.notes);
}

/// The child's private data in use now [bytes] (VmData of /proc/self/status), 0 if unknown.
std::size_t dataInUse() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmData:") {
      std::size_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
    std::getline(status, key);
  }
  return 0;
}

/// Bounds the child's new data memory and CPU time (readIsolated's contract); best effort.
void limitChild(std::size_t fileBytes) {
  const std::size_t budget = 4 * fileBytes + (std::size_t{256} << 20);
  const std::size_t inUse = dataInUse();
  if (inUse > 0) {
    const rlimit data{static_cast<rlim_t>(inUse + budget), static_cast<rlim_t>(inUse + budget)};
    ::setrlimit(RLIMIT_DATA, &data);
  }
  const rlim_t seconds = 60 + static_cast<rlim_t>(fileBytes / (20u << 20));
  const rlimit cpu{seconds, seconds + 5};
  ::setrlimit(RLIMIT_CPU, &cpu);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* what = strsignal(sig);
    return "signal " + std::to_string(sig) + (what != nullptr ? std::string(", ") + what : "");
  }
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

}  // namespace

Snapshot readIsolated(const std::string& name, std::size_t fileBytes,
                      const std::function<Snapshot()>& read) {
  int fds[2];
  if (::pipe(fds) != 0) {
    throw SnapshotError(
        "'" + name + "': cannot read it in a child process (pipe: " + std::strerror(errno) + ")");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SnapshotError("'" + name +
                        "': cannot read it in a child process (fork: " + std::strerror(e) + ")");
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::signal(SIGPIPE, SIG_DFL);  // the parent gone: end quietly
    limitChild(fileBytes);
    try {
      answer(fds[1], read());
    } catch (const SnapshotError& e) {
      answerError(fds[1], e.what());
    } catch (const std::bad_alloc&) {
      answerError(fds[1], "'" + name + "': reading it asked for more memory than a file of " +
                              std::to_string(fileBytes) + " bytes can need: corrupt or hostile");
    } catch (const std::exception& e) {
      answerError(fds[1], "'" + name + "': " + e.what());
    }
    answerError(fds[1], "'" + name + "': an unknown error");
  }
  ::close(fds[1]);
  Snapshot s;
  std::string error;
  const bool whole = receive(fds[0], s, error);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!whole || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw SnapshotError("'" + name + "': reading it crashed the reader (" + describe(status) +
                        "): the file is corrupt or hostile");
  }
  if (!error.empty()) throw SnapshotError(error);
  return s;
}

}  // namespace bhviz::sim::io
