#pragma once
// Splitting one operation (a large matrix product) across the machine's cores so that it stays
// fast when the cores are busy with other work. The calling thread takes part and claims chunks
// from a shared counter like the helpers do: when a helper is not scheduled (a loaded machine, the
// GUI drawing), the caller simply does more chunks itself. Nobody spin-waits. (Eigen's own OpenMP
// products spin on each other's progress and ran 4-10x slower than one thread on a loaded 2-core
// machine.)
#include <functional>

namespace attnscope {

// Runs task(i) for every i in [0, count) and returns when all are done. Chunks run on the calling
// thread and on up to (cores - 1) helper threads. While another caller is using the helpers (or
// from inside a task), everything runs on the calling thread instead: never a deadlock.
void share_work(int count, const std::function<void(int)>& task);

// How many threads share_work can use (helpers + the caller).
int work_sharing_threads();

}  // namespace attnscope
