// Fast DDS 2.14's DomainParticipantImpl::set_listener waits on a condition variable with the
// deadline steady_clock::time_point::max(). Compiled without pthread_cond_clockwait (as the PyPI
// wheel's libfastrtps is: manylinux), libstdc++ turns that deadline into a system-clock one,
// which overflows into the past: every wait returns at once and the waiter spins, holding the
// mutex almost all the time. A thread that needs the mutex to let the waiter go (here: the
// notifier; in Fast DDS: a discovery callback leaving its Sentry) starves on a busy machine.
//
//   g++ -O2 -std=c++17 -pthread livelock.cpp -o clockwait && ./clockwait    # ends after 2 s
//   g++ -O2 -std=c++17 -pthread -DNO_CLOCKWAIT livelock.cpp -o fallback && ./fallback
//                                              # ends late or never while both cores are busy
#include <bits/c++config.h>
#ifdef NO_CLOCKWAIT
#undef _GLIBCXX_USE_PTHREAD_COND_CLOCKWAIT
#endif
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

int main() {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  auto t0 = std::chrono::steady_clock::now();
  std::thread notifier([&] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    {
      std::lock_guard<std::mutex> lock(m);  // the mutex the waiter keeps taking back
      done = true;
    }
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait_until(lock, std::chrono::steady_clock::time_point::max(), [&] { return done; });
  }
  notifier.join();
  std::chrono::duration<double> waited = std::chrono::steady_clock::now() - t0;
  std::printf("released after %.1f s (the notifier ran at 2 s)\n", waited.count());
}
