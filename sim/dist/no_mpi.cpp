// sim/dist without MPI (configured where OpenMPI's headers were not found): a plain process
// runs as always; a launch by mpirun with more than one rank is refused in one line.

#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "sim/dist/dist.h"

namespace bhviz::sim::dist {

namespace {

int launchedRanks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 1;
}

}  // namespace

std::unique_ptr<Job> Job::startIfLaunched(int*, char***) {
  if (launchedRanks() > 1) {
    throw std::runtime_error(
        "this bhviz was built without MPI and cannot run as several ranks: install OpenMPI "
        "(scripts/install-deps.sh) and build again");
  }
  return nullptr;
}

Job::~Job() = default;
int Job::serve(const LocalFactory&) { return 0; }
void Job::finish(int) {}
Job* currentJob() { return nullptr; }

std::unique_ptr<Backend> makeDistributedBackend(std::unique_ptr<Backend>, std::size_t,
                                                const DistSettings&) {
  throw std::logic_error("makeDistributedBackend: built without MPI");
}

void abortJob(const std::string& why) {
  std::cerr << "bhviz: error: " << why << std::endl;
  std::exit(1);
}

}  // namespace bhviz::sim::dist
