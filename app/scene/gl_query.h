#pragma once
// What the GPU did for a stretch of GL commands: the device time it took (a GL_TIME_ELAPSED
// query) or the fragments it shaded (GL_FRAGMENT_SHADER_INVOCATIONS, GL 4.6 or
// ARB_pipeline_statistics_query). The host time of GL calls says little: they only queue work.
// The few entry points come through the context's loader (eglGetProcAddress,
// glfwGetProcAddress), as window.cpp loads glGetError: app/ sees no GL header.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "render/gl_loader.h"

namespace bhviz::app {

class GlQuery {
 public:
  enum class Kind {
    TimeElapsed,                ///< result in nanoseconds of device time
    FragmentShaderInvocations,  ///< result in fragment shader invocations
  };

  /// Needs a current GL context; `getProc` is its loader. Throws render::GlError when the
  /// context lacks query objects or the query cannot be made.
  explicit GlQuery(render::GetProcAddress getProc, Kind kind = Kind::TimeElapsed);
  ~GlQuery();  ///< the same context must still be current
  GlQuery(const GlQuery&) = delete;
  GlQuery& operator=(const GlQuery&) = delete;

  /// GL commands issued between begin() and end() are measured; no nesting, and no other query
  /// of the same kind may be active meanwhile.
  void begin();
  void end();
  /// Whether the last begin()–end() span's result can be read without waiting.
  bool available();
  /// That result once available(), read without consulting glGetError (which would report,
  /// and clear, whatever else in the frame went wrong).
  std::uint64_t availableResult();
  /// The last begin()–end() span's result; waits until the GL has done that work. Throws
  /// render::GlError when the GL refused the query (e.g. a kind the driver lacks).
  std::uint64_t result();
  /// result() of a TimeElapsed query in milliseconds.
  double elapsedMs() { return static_cast<double>(result()) * 1e-6; }
  /// Waits until every GL command issued so far has finished (glFinish): for host timings of
  /// work that ends in the GL, such as a buffer upload.
  void finish();
  /// Sends the GL commands issued so far to the device without waiting (glFlush), as a window's
  /// swap does: for a benchmark of frames drawn offscreen.
  void flush();

 private:
  using GenQueries = void (*)(int n, unsigned* ids);
  using DeleteQueries = void (*)(int n, const unsigned* ids);
  using BeginQuery = void (*)(unsigned target, unsigned id);
  using EndQuery = void (*)(unsigned target);
  using GetQueryObjectUi64 = void (*)(unsigned id, unsigned pname, std::uint64_t* value);
  using Finish = void (*)();  // glFinish and glFlush
  using GetError = unsigned (*)();

  GenQueries m_genQueries = nullptr;
  DeleteQueries m_deleteQueries = nullptr;
  BeginQuery m_beginQuery = nullptr;
  EndQuery m_endQuery = nullptr;
  GetQueryObjectUi64 m_getQueryObjectUi64 = nullptr;
  Finish m_finish = nullptr;
  Finish m_flush = nullptr;
  GetError m_getError = nullptr;
  unsigned m_target = 0;  // GLenum of the kind
  unsigned m_query = 0;
  bool m_ended = false;  // a result can be read: begin() and end() both happened
};

/// The device time of a stretch of GL commands issued every frame (the window's scene), read
/// frames later without waiting: a ring of TimeElapsed queries. When every query of the ring is
/// still in flight, that frame goes untimed rather than stalling the loop.
class GlTimerRing {
 public:
  /// Throws render::GlError like GlQuery.
  explicit GlTimerRing(render::GetProcAddress getProc, std::size_t depth = 4);

  void begin();
  void end();
  /// The device time of the newest span the GL has finished [ms], or a negative value while
  /// none has; never waits.
  double poll();

 private:
  std::vector<std::unique_ptr<GlQuery>> m_queries;
  std::vector<bool> m_inFlight;
  std::size_t m_next = 0;  // the slot begin() uses: the oldest
  bool m_timing = false;   // begin() started a query that end() must close
  double m_latest = -1.0;
};

}  // namespace bhviz::app
