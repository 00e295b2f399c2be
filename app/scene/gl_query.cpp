#include "app/scene/gl_query.h"

#include <string>

namespace bhviz::app {

namespace {

// From the GL 4.6 core registry: app/ includes no GL header.
constexpr unsigned kTimeElapsed = 0x88BF;                // GL_TIME_ELAPSED
constexpr unsigned kFragmentShaderInvocations = 0x82F4;  // GL_FRAGMENT_SHADER_INVOCATIONS
constexpr unsigned kQueryResult = 0x8866;                // GL_QUERY_RESULT
constexpr unsigned kQueryResultAvailable = 0x8867;       // GL_QUERY_RESULT_AVAILABLE
constexpr unsigned kNoError = 0;                         // GL_NO_ERROR

template <typename F>
F load(render::GetProcAddress getProc, const char* name) {
  const auto f = reinterpret_cast<F>(getProc(name));
  if (f == nullptr) throw render::GlError(std::string("GlQuery: the GL has no ") + name);
  return f;
}

}  // namespace

GlQuery::GlQuery(render::GetProcAddress getProc, Kind kind)
    : m_genQueries(load<GenQueries>(getProc, "glGenQueries")),
      m_deleteQueries(load<DeleteQueries>(getProc, "glDeleteQueries")),
      m_beginQuery(load<BeginQuery>(getProc, "glBeginQuery")),
      m_endQuery(load<EndQuery>(getProc, "glEndQuery")),
      m_getQueryObjectUi64(load<GetQueryObjectUi64>(getProc, "glGetQueryObjectui64v")),
      m_finish(load<Finish>(getProc, "glFinish")),
      m_flush(load<Finish>(getProc, "glFlush")),
      m_getError(load<GetError>(getProc, "glGetError")),
      m_target(kind == Kind::TimeElapsed ? kTimeElapsed : kFragmentShaderInvocations) {
  m_genQueries(1, &m_query);
  if (m_query == 0 || m_getError() != kNoError) {
    throw render::GlError("GlQuery: glGenQueries failed");
  }
}

GlQuery::~GlQuery() {
  if (m_query != 0) m_deleteQueries(1, &m_query);
}

void GlQuery::begin() {
  m_ended = false;
  m_beginQuery(m_target, m_query);
}

void GlQuery::end() {
  m_endQuery(m_target);
  m_ended = true;
}

std::uint64_t GlQuery::result() {
  if (!m_ended) throw render::GlError("GlQuery: result() before begin() and end()");
  std::uint64_t value = 0;
  m_getQueryObjectUi64(m_query, kQueryResult, &value);  // blocks until the result is available
  if (const unsigned e = m_getError(); e != kNoError) {
    const char* what =
        m_target == kTimeElapsed ? "GL_TIME_ELAPSED" : "GL_FRAGMENT_SHADER_INVOCATIONS";
    throw render::GlError(std::string("GlQuery: the ") + what + " query failed (GL error " +
                          std::to_string(e) + ")");
  }
  return value;
}

bool GlQuery::available() {
  if (!m_ended) return false;
  std::uint64_t ready = 0;
  m_getQueryObjectUi64(m_query, kQueryResultAvailable, &ready);
  return ready != 0;
}

std::uint64_t GlQuery::availableResult() {
  std::uint64_t value = 0;
  m_getQueryObjectUi64(m_query, kQueryResult, &value);
  return value;
}

void GlQuery::finish() { m_finish(); }

void GlQuery::flush() { m_flush(); }

GlTimerRing::GlTimerRing(render::GetProcAddress getProc, std::size_t depth)
    : m_inFlight(depth < 1 ? 1 : depth, false) {
  for (std::size_t i = 0; i < m_inFlight.size(); ++i) {
    m_queries.push_back(std::make_unique<GlQuery>(getProc, GlQuery::Kind::TimeElapsed));
  }
}

void GlTimerRing::begin() {
  poll();
  m_timing = !m_inFlight[m_next];
  if (m_timing) m_queries[m_next]->begin();
}

void GlTimerRing::end() {
  if (!m_timing) return;
  m_queries[m_next]->end();
  m_inFlight[m_next] = true;
  m_next = (m_next + 1) % m_queries.size();
  m_timing = false;
}

double GlTimerRing::poll() {
  // From the oldest slot to the newest, so that the last one read is the newest finished.
  for (std::size_t k = 0; k < m_queries.size(); ++k) {
    const std::size_t i = (m_next + k) % m_queries.size();
    if (m_inFlight[i] && m_queries[i]->available()) {
      m_latest = static_cast<double>(m_queries[i]->availableResult()) * 1e-6;
      m_inFlight[i] = false;
    }
  }
  return m_latest;
}

}  // namespace bhviz::app
