// bhviz: the command-line edge. Every failure becomes one line on stderr and an exit status
// (2: the command line asked for something impossible, 1: the run failed), never an abort.

#include <exception>
#include <iostream>
#include <memory>
#include <new>

#include "app/core/backend_select.h"
#include "app/core/cli.h"
#include "app/core/sweep.h"
#include "app/headless.h"
#include "app/lesson_run.h"
#include "app/scene/gl_context.h"
#include "app/window/window.h"
#include "app/window/window_app.h"
#include "sim/dist/dist.h"
#include "sim/params.h"
#include "sim/simulation.h"

namespace {

int run(int argc, char** argv) {
  using namespace bhviz::app;
  const auto options = parseCommandLine(argc, argv, std::cout);
  if (!options) return 0;  // --help or --version
  if (!options->headless) return runWindow(*options, std::cout, std::cerr);
  if (options->sweep.wanted) return runSweep(*options, std::cout, std::cerr);
  if (!options->lesson.empty()) return runLesson(*options, std::cout, std::cerr);
  return runHeadless(*options, std::cout, std::cerr);
}

int runLeader(int argc, char** argv) {
  using bhviz::app::oneLine;
  try {
    return run(argc, argv);
  } catch (const bhviz::app::BackendUnavailable& e) {
    std::cerr << "bhviz: " << oneLine(e.what()) << '\n';
    return 2;
  } catch (const bhviz::app::NoDisplay& e) {
    std::cerr << e.what() << '\n';  // already one line saying how to run without a display
    return 2;
  } catch (const bhviz::app::WindowUnavailable& e) {
    std::cerr << "bhviz: error: " << oneLine(e.what()) << '\n';
    return 1;
  } catch (const bhviz::app::UsageError& e) {
    std::cerr << "bhviz: error: " << oneLine(e.what()) << '\n';
    return 2;
  } catch (const bhviz::sim::InvalidParameter& e) {
    // The command line is checked up front; this is a range only the library knew about.
    std::cerr << "bhviz: error: " << oneLine(e.what()) << '\n';
    return 2;
  } catch (const bhviz::app::GlContextUnavailable& e) {
    // --frames/--screenshot on a machine without EGL: say what was tried, before any work.
    std::cerr << "bhviz: error: " << oneLine(e.what()) << '\n';
    return 1;
  } catch (const bhviz::sim::NonFiniteState& e) {
    std::cerr << "bhviz: error: " << bhviz::app::describe(e) << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "bhviz: error: out of memory: try a smaller --n\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "bhviz: error: " << oneLine(e.what()) << '\n';
    return 1;
  } catch (...) {
    std::cerr << "bhviz: error: unknown failure\n";
    return 1;
  }
}

}  // namespace

// Under mpirun every rank starts here: rank 0 runs the program (and prints), the others serve
// its simulation's commands until it finishes, and end with its exit status. A plain bhviz
// never starts MPI.
int main(int argc, char** argv) {
  std::unique_ptr<bhviz::sim::dist::Job> job;
  try {
    job = bhviz::sim::dist::Job::startIfLaunched(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << "bhviz: error: " << bhviz::app::oneLine(e.what()) << '\n';
    return 2;
  }
  if (job && !job->leader()) return job->serve(bhviz::app::makeRankBackend);
  const int status = runLeader(argc, argv);
  if (job) job->finish(status);
  return status;
}
