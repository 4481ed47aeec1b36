// Stage 4.3 controller plugin for the MAES-ROS wander benchmark (bench/bench_wander.py).
//
// Modelled on Stage's examples/ctrl/wander.cc, but with the rule of bench_wander.py's
// wander(): drive straight at CRUISE (1 m/s) while the beams within FRONT_HALF_ANGLE (30 deg)
// of the heading are all farther than CLEARANCE (1.5 m); otherwise turn in place at TURN
// (1 rad/s) towards the side whose beams (left: angles in (0, pi), right: the same number of
// beams with angles < 0, the ones nearest the heading's back excluded) sum to more range
// (ties turn left). Beam k is assumed to point at -pi + k * 2 pi / 180 from the heading (the
// core's layout); the world file bench_stage.py writes makes Stage's ranger do exactly that
// (fov 358 deg, 180 samples, sensor yawed -1 deg). The sector index ranges are computed with
// the core's own floating-point formula, so they match bench_wander._sector_slices.
//
// Usage in a world file (one instance per robot; all share this library's globals):
//     ctrl "wander_bench ticks 100 warmup 20"
// After `warmup` world updates it starts a wall clock (CLOCK_MONOTONIC) and a process CPU clock
// (CLOCK_PROCESS_CPUTIME_ID, all of Stage's threads); after `ticks` more it prints one JSON
// line to stdout (per-tick wall and CPU seconds, the robots' travel, stalls and scan stats),
// optionally the final poses (`poses 1`), and quits the world.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "stage.hh"
using namespace Stg;

static const double CRUISE = 1.0; // m/s
static const double TURN = 1.0; // rad/s
static const double CLEARANCE = 1.5; // m
static const double FRONT_HALF_ANGLE = M_PI / 6;
static const unsigned N_BEAMS = 180;

struct Robot {
  ModelPosition *pos;
  ModelRanger *laser;
  Pose start, last, prev; // prev: the pose at the end of the previous update
  double travelled;
  unsigned long stall_ticks;
  unsigned long cruise_cmds, turn_cmds;
  unsigned long scans;
};

static std::vector<Robot *> robots;
static bool world_cb_installed = false;
static unsigned long n_ticks = 100, n_warmup = 20;
static bool print_poses = false;
static bool dump_scan = false; // print robot 0's first scan and pose (checking)
static size_t front0, front1, left0, left1, right0, right1; // [begin, end) beam indices
static timespec wall0, cpu0;

static double secs(const timespec &a, const timespec &b)
{
  return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

// bench_wander._sector_slices on the core's beam angles, same float operations as numpy:
// angle_k = -pi + k * (2 pi / n)
static void compute_sectors(unsigned n)
{
  const double step = 2 * M_PI / n;
  std::vector<double> a(n);
  for (unsigned k = 0; k < n; ++k)
    a[k] = -M_PI + (double)k * step;
  std::vector<size_t> front, left, right;
  for (unsigned k = 0; k < n; ++k) {
    if (std::fabs(a[k]) <= FRONT_HALF_ANGLE)
      front.push_back(k);
    if (a[k] > 0 && a[k] < M_PI)
      left.push_back(k);
    if (a[k] < 0)
      right.push_back(k);
  }
  front0 = front.front();
  front1 = front.back() + 1;
  left0 = left.front();
  left1 = left.back() + 1;
  // the last len(left) of the negative-angle beams
  right1 = right.back() + 1;
  right0 = right1 - left.size();
}

// the controller: one robot's scan -> its velocity command
static int LaserUpdate(Model *, Robot *r)
{
  const std::vector<meters_t> &scan = r->laser->GetSensors()[0].ranges;
  if (scan.size() != N_BEAMS)
    return 0;
  ++r->scans;
  if (dump_scan && r->scans == 1 && r == robots.front()) {
    const Pose p = r->pos->GetPose();
    printf("\nscan0 %s %.6f %.6f %.6f", r->pos->Token(), p.x, p.y, p.a);
    for (size_t k = 0; k < scan.size(); ++k)
      printf(" %.4f", scan[k]);
    printf("\n");
  }
  double front_min = std::numeric_limits<double>::infinity();
  for (size_t k = front0; k < front1; ++k)
    front_min = std::min(front_min, scan[k]);
  double left_sum = 0, right_sum = 0;
  for (size_t k = left0; k < left1; ++k)
    left_sum += scan[k];
  for (size_t k = right0; k < right1; ++k)
    right_sum += scan[k];
  const bool clear = front_min > CLEARANCE;
  const double towards = left_sum >= right_sum ? 1.0 : -1.0;
  if (clear) {
    r->pos->SetXSpeed(CRUISE);
    r->pos->SetTurnSpeed(0.0);
    ++r->cruise_cmds;
  } else {
    r->pos->SetXSpeed(0.0);
    r->pos->SetTurnSpeed(TURN * towards);
    ++r->turn_cmds;
  }
  return 0; // keep the callback
}

static void report(World *world, double wall, double cpu)
{
  double travelled = 0, travelled_min = 1e300, travelled_max = 0;
  unsigned long stalls = 0, cruise = 0, turn = 0, scans = 0;
  unsigned long nonfinite = 0, beams = 0, hits = 0;
  double rmin = 1e300, rmax = -1e300;
  for (size_t i = 0; i < robots.size(); ++i) {
    Robot *r = robots[i];
    travelled += r->travelled;
    travelled_min = std::min(travelled_min, r->travelled);
    travelled_max = std::max(travelled_max, r->travelled);
    stalls += r->stall_ticks;
    cruise += r->cruise_cmds;
    turn += r->turn_cmds;
    scans += r->scans;
    const ModelRanger::Sensor &s = r->laser->GetSensors()[0];
    for (size_t k = 0; k < s.ranges.size(); ++k) {
      const double v = s.ranges[k];
      ++beams;
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      rmin = std::min(rmin, v);
      rmax = std::max(rmax, v);
      if (v < s.range.max)
        ++hits;
    }
  }
  const size_t n = robots.size();
  printf("\n{\"robots\": %zu, \"ticks\": %lu, \"warmup\": %lu, \"wall\": %.9g, \"cpu\": %.9g, "
         "\"sim_time\": %.3f, \"travelled_mean\": %.6g, \"travelled_min\": %.6g, "
         "\"travelled_max\": %.6g, \"stall_ticks\": %lu, \"cruise_cmds\": %lu, "
         "\"turn_cmds\": %lu, \"scans\": %lu, \"last_scan_beams\": %lu, "
         "\"last_scan_nonfinite\": %lu, \"last_scan_hits\": %lu, \"last_scan_min\": %.6g, "
         "\"last_scan_max\": %.6g, \"sectors\": [[%zu, %zu], [%zu, %zu], [%zu, %zu]], "
         "\"stage\": \"%s\"}\n",
         n, n_ticks, n_warmup, wall / n_ticks, cpu / n_ticks, world->SimTimeNow() / 1e6,
         n ? travelled / n : 0.0, n ? travelled_min : 0.0, travelled_max, stalls, cruise, turn,
         scans, beams, nonfinite, hits, rmin, rmax, front0, front1, left0, left1, right0, right1,
         Stg::Version());
  if (dump_scan) // the last scans, with the poses before and after the last move
    for (size_t i = 0; i < n; ++i) {
      const Robot *r = robots[i];
      const Pose p = r->pos->GetPose();
      printf("scanL %s %.6f %.6f %.6f %.6f %.6f %.6f", r->pos->Token(), r->prev.x, r->prev.y,
             r->prev.a, p.x, p.y, p.a);
      const std::vector<meters_t> &scan = r->laser->GetSensors()[0].ranges;
      for (size_t k = 0; k < scan.size(); ++k)
        printf(" %.4f", scan[k]);
      printf("\n");
    }
  if (print_poses)
    for (size_t i = 0; i < n; ++i) {
      const Pose p = robots[i]->pos->GetPose();
      printf("pose %s start %.3f %.3f %.3f end %.3f %.3f %.3f travelled %.3f stalls %lu\n",
             robots[i]->pos->Token(), robots[i]->start.x, robots[i]->start.y, robots[i]->start.a,
             p.x, p.y, p.a, robots[i]->travelled, robots[i]->stall_ticks);
    }
  fflush(stdout);
}

// once per world update, after every controller ran
static int WorldUpdate(World *world, void *)
{
  const uint64_t done = world->UpdateCount() + 1; // updates is incremented after callbacks
  for (size_t i = 0; i < robots.size(); ++i) {
    Robot *r = robots[i];
    const Pose p = r->pos->GetPose();
    r->travelled += std::hypot(p.x - r->last.x, p.y - r->last.y);
    r->prev = r->last;
    r->last = p;
    if (r->pos->Stalled())
      ++r->stall_ticks;
  }
  if (done == n_warmup) {
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  } else if (done == n_warmup + n_ticks) {
    timespec wall1, cpu1;
    clock_gettime(CLOCK_MONOTONIC, &wall1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    report(world, secs(wall0, wall1), secs(cpu0, cpu1));
    world->Quit();
    return 1; // remove this callback
  }
  return 0;
}

static void parse_args(const std::string &s)
{
  std::istringstream in(s);
  std::string word;
  in >> word; // the library name
  while (in >> word) {
    std::string value;
    if (!(in >> value))
      break;
    if (word == "ticks")
      n_ticks = strtoul(value.c_str(), NULL, 10);
    else if (word == "warmup")
      n_warmup = strtoul(value.c_str(), NULL, 10);
    else if (word == "dump")
      dump_scan = atoi(value.c_str()) != 0;
    else if (word == "poses")
      print_poses = atoi(value.c_str()) != 0;
    else
      fprintf(stderr, "wander_bench: unknown argument %s\n", word.c_str());
  }
  if (n_warmup < 1)
    n_warmup = 1;
}

extern "C" int Init(Model *mod, CtrlArgs *args)
{
  Robot *r = new Robot();
  r->pos = dynamic_cast<ModelPosition *>(mod);
  if (!r->pos) {
    PRINT_ERR("wander_bench: not a position model");
    exit(1);
  }
  r->laser = dynamic_cast<ModelRanger *>(r->pos->GetChild("ranger:0"));
  if (!r->laser || r->laser->GetSensors().empty()
      || r->laser->GetSensors()[0].sample_count != N_BEAMS) {
    PRINT_ERR("wander_bench: needs a child ranger:0 with one 180-sample sensor");
    exit(2);
  }
  if (!world_cb_installed) {
    parse_args(args->worldfile);
    compute_sectors(N_BEAMS);
    mod->GetWorld()->AddUpdateCallback(WorldUpdate, NULL);
    world_cb_installed = true;
  }
  r->start = r->last = r->pos->GetPose();
  r->laser->AddCallback(Model::CB_UPDATE, model_callback_t(LaserUpdate), r);
  r->pos->Subscribe(); // starts the position updates
  r->laser->Subscribe(); // starts the ranger updates
  robots.push_back(r);
  return 0;
}
