// The results of one benchmark run and their markdown report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "integration/bench/stats.h"

namespace bench {

/// Samples of one row: per-invocation wall, CPU and peak RSS.
struct Series {
  std::vector<double> wall_ms, cpu_ms, rss_kib;  ///< rss empty: not applicable
  void Add(double wall, double cpu, double rss = -1) {
    wall_ms.push_back(wall);
    cpu_ms.push_back(cpu);
    if (rss >= 0) rss_kib.push_back(rss);
  }
};

struct ParallelRun {
  int n = 0;
  std::vector<double> add_total_ms, del_total_ms;
  std::vector<double> add_each_wall_ms, add_each_cpu_ms;
  /// The floor run by N forked children at once (no exec): what the kernel
  /// itself makes of N concurrent ADDs.
  std::vector<double> floor_add_total_ms, floor_del_total_ms;
};

struct Results {
  // Machine and build.
  std::string kernel, cpu, date, plugin_path, plugin_info, go_info;
  int nproc = 0;
  int nice = 0;
  int settle_ms = 0;
  int iterations = 0, warmup = 0, enis = 0, parallel_iterations = 0;
  long driver_rss_anon_kib = 0;  ///< what a forked child inherits before exec

  // Rows, keyed by a fixed set of names (see report.cpp).
  std::map<std::string, Series> rows;
  std::string none_unavailable;     ///< non-empty: why mode none has no row
  std::string macvlan_unavailable;  ///< non-empty: why erdma-cni macvlan has no row
  std::string kubelet_unavailable;  ///< non-empty: why the device.resource rows are missing
  std::string macvlan_where;        ///< the macvlan rows' parent and pod, for the header
  std::vector<ParallelRun> parallel;
  // The scale group; scale_n 0: not run.
  int scale_n = 0;
  std::string scale_where;  ///< its devices and pods, for the header
  /// Making the busy node (veths, pods, erdma-cni ADDs) and removing it (DELs,
  /// pods, veths), and the erdma-cni calls' share of each, seconds of wall.
  double scale_setup_s = 0, scale_setup_calls_s = 0, scale_teardown_s = 0, scale_teardown_calls_s = 0;
  /// CPU of each busy attachment's ADD, in the order they were made: what an
  /// ADD costs as the node fills.
  std::vector<double> scale_fill_move_cpu_ms, scale_fill_macvlan_cpu_ms;
  std::vector<std::string> variant_labels;        ///< rows "v:<label> ADD/DEL"
  std::string load_before, load_after;            ///< /proc/loadavg around the run
  std::string notes;                              ///< anything the run noticed (state checks)
  std::string data_fs;                            ///< the file system of the main rows' dataDir
  std::map<std::string, std::string> variant_fs;  ///< the same per variant label
  /// --phases: row ("erdma ADD") -> phase -> CPU ms of each invocation.
  std::map<std::string, std::map<std::string, std::vector<double>>> phases;
  std::vector<std::string> phase_order;  ///< phase names as first seen
};

/// How long the "idle blocked" calibration sleeps before it exits.
inline constexpr int kIdleBlockMs = 20;

/// --phases rows after the plugin's own: the process's CPU from wait4, and
/// that less the phases (its exit: atexit and the kernel's teardown).
inline constexpr const char* kPhaseRusage = "(process, rusage)";
inline constexpr const char* kPhaseExit = "(rusage less the phases: exit)";
/// Where the plugin execs an IPAM plugin: its own CPU less that plugin's
/// ("ipam-plugin", from wait4), invocation by invocation.
inline constexpr const char* kPhaseLessIpam = "(rusage less ipam-plugin)";

/// The markdown report: machine, per-invocation table, ratios, parallel
/// ADDs, targets with PASS/MISS.
std::string RenderReport(const Results& r);

}  // namespace bench
