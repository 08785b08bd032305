package org.graphene.yarn;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Graphene's online rules on one node update: a port of {@code node_update} in
 * crates/graphene-engine/src/online/yarn_rm.rs (read its module docs for the rules). The parity
 * test ({@code ParityTest}) replays the Rust side's generated cases and checks the same picks
 * and counters; a change here needs the same change there (and a regenerated fixture).
 *
 * <p>Two rule sets: graphene's (the default) and graphene-plan's ({@link State#plan} set: a plan
 * of every outstanding container on a pooled grid of unit slots, followed per node update).
 *
 * <p>Pure: no YARN types, so the rules are testable alone and the scheduler only translates.
 */
public final class GraphenePacker {
  /** Relative slack of the memory fit test, as the Rust library's CAPACITY_EPS. */
  static final double CAPACITY_EPS = 1e-9;
  /** Slots of graphene-plan's grid (one time unit each), as PLAN_SLOTS in Rust. */
  static final int PLAN_SLOTS = 1024;
  /** Placements and slot steps one plan may spend, as PLAN_BUDGET in Rust. */
  static final long PLAN_BUDGET = 1_000_000L;

  /** graphene-plan's order of applications. */
  public enum Objective {
    /** Least remaining work first. */
    SRPT,
    /** Submission order. */
    FIFO
  }

  /** An application's outstanding containers at one priority. */
  public static final class Request {
    final int app;
    final int priority;
    final double memory;
    final double vcores;
    final int count;

    public Request(int app, int priority, double memory, double vcores, int count) {
      this.app = app;
      this.priority = priority;
      this.memory = memory;
      this.vcores = vcores;
      this.count = count;
    }
  }

  /** An application: its queue's index and its submission order (smaller first). */
  public static final class App {
    final int app;
    final int queue;
    final double arrival;

    public App(int app, int queue, double arrival) {
      this.app = app;
      this.queue = queue;
      this.arrival = arrival;
    }
  }

  /** One container to allocate: the application and the priority of the request it serves. */
  public static final class Pick {
    public final int app;
    public final int priority;

    Pick(int app, int priority) {
      this.app = app;
      this.priority = priority;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Pick && ((Pick) o).app == app && ((Pick) o).priority == priority;
    }

    @Override
    public int hashCode() {
      return app * 31 + priority;
    }

    @Override
    public String toString() {
      return "app " + app + " priority " + priority;
    }
  }

  /** What the scheduler keeps between node updates. */
  public static final class State {
    public double[] shares = new double[0];
    public double[] deficits = new double[0];
    /** Unfairness bound as a fraction of the cluster; NaN: no fairness. */
    public double kappa = 0.1;
    public double etaScale = 1.0;
    public double avgP;
    public double avgS;
    public boolean seen;
    public int bundle = 16;
    /** graphene-plan's rules with this objective; null: graphene's rules. */
    public Objective plan;
    /** The largest deficit any queue reached (for tests and the scheduler's log). */
    public double maxSeen;
    /** The largest single charge (a container's DRF share) made so far. */
    public double maxCharge;

    /** Adds a queue of share {@code share}; returns its index. */
    public int addQueue(double share) {
      int n = shares.length;
      shares = Arrays.copyOf(shares, n + 1);
      deficits = Arrays.copyOf(deficits, n + 1);
      shares[n] = share;
      return n;
    }
  }

  private GraphenePacker() {}

  /** priScore of a YARN priority (lower runs first). */
  static double priorityScore(int priority) {
    return 1.0 / (1.0 + (double) Math.max(priority, 0));
  }

  static double containerWork(double memory, double vcores, double[] cluster) {
    double w = 0.0;
    if (cluster[0] > 0.0) {
      w += Math.max(memory, 0.0) / cluster[0];
    }
    if (cluster[1] > 0.0) {
      w += Math.max(vcores, 0.0) / cluster[1];
    }
    return Double.isFinite(w) ? w : 0.0;
  }

  static boolean fitsMemory(double memory, double left) {
    return memory <= left * (1.0 + CAPACITY_EPS) + CAPACITY_EPS;
  }

  static double packingScore(double[] demand, double[] left, double[] cap) {
    double p = 0.0;
    for (int r = 0; r < 2; r++) {
      if (cap[r] > 0.0) {
        p += (demand[r] / cap[r]) * (Math.min(Math.max(left[r], 0.0), cap[r]) / cap[r]);
      }
    }
    return p;
  }

  static double relativePriority(double pri, double frontier) {
    if (frontier > 0.0) {
      return Math.min(Math.max(pri / frontier, 0.0), 1.0);
    }
    return 1.0;
  }

  private static final class Cand {
    int req;
    int group;
    double arrival;
    int app;
    int priority;
    double srpt;
    double p;
    double perf;
    /** graphene-plan: the planned slot of the request's next container, the app's place. */
    int slot;
    int rank;
  }

  /** graphene-plan's order: planned slot, packing, place in the plan, then {@link #ties}. */
  private static int planOrder(Cand a, Cand b) {
    int c = Integer.compare(a.slot, b.slot);
    if (c == 0) c = Double.compare(b.p, a.p);
    if (c == 0) c = Integer.compare(a.rank, b.rank);
    return c != 0 ? c : ties(a, b);
  }

  /** An application's remaining work: its outstanding containers' work. */
  private static double appWork(int app, List<Request> requests, int[] counts, double[] cluster) {
    double w = 0.0;
    for (int i = 0; i < requests.size(); i++) {
      Request r = requests.get(i);
      if (r.app == app && counts[i] > 0) {
        w += (double) counts[i] * containerWork(r.memory, r.vcores, cluster);
      }
    }
    return w;
  }

  /** graphene-plan's plan of one node update (the Rust module docs of yarn_rm.rs). */
  static final class Plan {
    /** Per request: runs of {slot, containers} in allocation order. */
    final List<List<int[]>> runs = new ArrayList<>();
    /** Per request: the run its next container is in. */
    final int[] next;
    /** Each application's place in the objective's order. */
    final Map<Integer, Integer> rank = new HashMap<>();

    Plan(List<App> apps, List<Request> requests, double[] cluster, double[] clusterFree, Objective objective) {
      double cap = cluster[0] > 0.0 ? cluster[0] : 0.0;
      double[] used = new double[PLAN_SLOTS];
      double free0 = clusterFree == null ? cap : clusterFree[0];
      used[0] = Math.min(Math.max(cap - free0, 0.0), cap);
      int[] counts = new int[requests.size()];
      for (int i = 0; i < counts.length; i++) {
        counts[i] = requests.get(i).count;
        runs.add(new ArrayList<>());
      }
      next = new int[counts.length];
      List<double[]> order = new ArrayList<>();
      for (App a : apps) {
        double key = objective == Objective.SRPT ? appWork(a.app, requests, counts, cluster) : 0.0;
        order.add(new double[] {key, a.arrival, a.app});
      }
      order.sort((a, b) -> {
        int c = Double.compare(a[0], b[0]);
        if (c == 0) c = Double.compare(a[1], b[1]);
        if (c == 0) c = Integer.compare((int) a[2], (int) b[2]);
        return c;
      });
      long units = 0;
      for (int k = 0; k < order.size(); k++) {
        int app = (int) order.get(k)[2];
        if (rank.containsKey(app)) {
          continue;
        }
        rank.put(app, k);
        List<Integer> reqs = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
          if (requests.get(i).app == app) {
            reqs.add(i);
          }
        }
        reqs.sort((a, b) -> {
          int c = Integer.compare(requests.get(a).priority, requests.get(b).priority);
          return c != 0 ? c : Integer.compare(a, b);
        });
        for (int i : reqs) {
          double mem = requests.get(i).memory;
          double m = Math.min(mem > 0.0 ? mem : 0.0, cap);
          long left = Integer.toUnsignedLong(requests.get(i).count);
          int t = 0;
          while (left > 0 && t < PLAN_SLOTS && units < PLAN_BUDGET) {
            int n = 0;
            while (left > 0 && units < PLAN_BUDGET && fitsMemory(m, cap - used[t])) {
              used[t] += m;
              n++;
              left--;
              units++;
            }
            if (n > 0) {
              runs.get(i).add(new int[] {t, n});
            }
            t++;
            units++;
          }
        }
      }
    }

    /** The planned slot of request i's next container (Integer.MAX_VALUE: unplanned). */
    int slot(int i) {
      List<int[]> r = runs.get(i);
      return next[i] < r.size() ? r.get(next[i])[0] : Integer.MAX_VALUE;
    }

    /** Request i's next container was allocated. */
    void take(int i) {
      List<int[]> r = runs.get(i);
      if (next[i] < r.size()) {
        int[] run = r.get(next[i]);
        run[1]--;
        if (run[1] == 0) {
          next[i]++;
        }
      }
    }
  }

  /** graphene's order: perfScore, then {@link #ties}. */
  private static int order(Cand a, Cand b) {
    int c = Double.compare(b.perf, a.perf);
    return c != 0 ? c : ties(a, b);
  }

  /** Both orders' ties: less remaining work, earlier submission, lower id, lower priority. */
  private static int ties(Cand a, Cand b) {
    int c = Double.compare(a.srpt, b.srpt);
    if (c == 0) c = Double.compare(a.arrival, b.arrival);
    if (c == 0) c = Integer.compare(a.app, b.app);
    if (c == 0) c = Integer.compare(a.priority, b.priority);
    return c;
  }

  /** {@link #nodeUpdate(State, double[], double[], double[], double[], List, List)}, the cluster all free. */
  public static List<Pick> nodeUpdate(State s, double[] capacity, double[] free, double[] cluster,
      List<App> apps, List<Request> requests) {
    return nodeUpdate(s, capacity, free, cluster, null, apps, requests);
  }

  /**
   * One node update: the containers to allocate, in order. {@code s} is updated (deficits
   * charged, eta averages moved). {@code capacity}, {@code free}, {@code cluster} and
   * {@code clusterFree} (what of the cluster is unallocated, which graphene-plan's first slot
   * holds; null: all) are (memory, vcores).
   */
  public static List<Pick> nodeUpdate(State s, double[] capacity, double[] free, double[] cluster,
      double[] clusterFree, List<App> apps, List<Request> requests) {
    int groups = s.shares.length;
    Deficits deficits = new Deficits(s.shares, s.kappa, s.deficits);
    int[] counts = new int[requests.size()];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = requests.get(i).count;
    }
    double[] left = {free[0], free[1]};
    List<Pick> out = new ArrayList<>();
    // graphene-plan: one container per pass (its next container may be planned later).
    int bundle = s.plan != null ? 1 : Math.max(s.bundle, 1);
    Plan plan = s.plan != null ? new Plan(apps, requests, cluster, clusterFree, s.plan) : null;
    while (true) {
      List<Cand> cands = new ArrayList<>();
      for (App a : apps) {
        double srpt = appWork(a.app, requests, counts, cluster);
        double frontier = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < requests.size(); i++) {
          Request r = requests.get(i);
          if (r.app == a.app && counts[i] > 0) {
            frontier = Math.max(frontier, priorityScore(r.priority));
          }
        }
        for (int i = 0; i < requests.size(); i++) {
          Request r = requests.get(i);
          if (r.app != a.app || counts[i] == 0 || !fitsMemory(r.memory, left[0]) || a.queue >= groups) {
            continue;
          }
          double p = packingScore(new double[] {r.memory, r.vcores}, left, capacity);
          Cand c = new Cand();
          if (plan != null) {
            c.slot = plan.slot(i);
            c.rank = plan.rank.getOrDefault(a.app, Integer.MAX_VALUE);
          } else {
            p *= relativePriority(priorityScore(r.priority), frontier);
          }
          c.req = i;
          c.group = a.queue;
          c.arrival = a.arrival;
          c.app = a.app;
          c.priority = r.priority;
          c.srpt = srpt;
          c.p = p;
          cands.add(c);
        }
      }
      if (cands.isEmpty()) {
        break;
      }
      if (plan != null) {
        cands.sort(GraphenePacker::planOrder);
      } else {
        score(s, cands);
      }
      int allocated = 0;
      boolean[] current = null;
      for (boolean strict : new boolean[] {true, false}) {
        int walked = 0;
        boolean blocked = false;
        for (Cand c : cands) {
          if (walked == bundle) {
            break;
          }
          if (current == null) {
            current = contending(groups, cands, counts, requests, left);
          }
          boolean[] contending = current;
          if (!contending[c.group]) {
            continue;
          }
          Request r = requests.get(c.req);
          double f = drfFactor(r, cluster);
          int forced = strict ? deficits.mustServeAmong(contending) : deficits.mostOwedAmong(contending);
          if (forced >= 0 && forced != c.group) {
            continue;
          }
          if (strict && deficits.wouldExceed(c.group, f, contending)) {
            blocked = true;
            continue;
          }
          walked += 1;
          while (counts[c.req] > 0) {
            if (!fitsMemory(r.memory, left[0])) {
              break;
            }
            if (strict && deficits.wouldExceed(c.group, f, contending)) {
              blocked = true;
              break;
            }
            deficits.chargeAmong(c.group, f, contending);
            s.maxCharge = Math.max(s.maxCharge, f);
            left[0] -= r.memory;
            left[1] -= r.vcores;
            counts[c.req] -= 1;
            out.add(new Pick(c.app, c.priority));
            allocated += 1;
            current = null;
            if (plan != null) {
              plan.take(c.req);
              break;
            }
            int must = deficits.mustServeAmong(contending);
            if (!strict || (must >= 0 && must != c.group)) {
              break;
            }
          }
        }
        if (allocated > 0 || !blocked) {
          break;
        }
      }
      if (allocated == 0) {
        break;
      }
    }
    s.deficits = deficits.deficit;
    s.maxSeen = Math.max(s.maxSeen, deficits.maxSeen);
    return out;
  }

  /** graphene's scoring: perfScore with eta from the running averages, candidates sorted by it. */
  private static void score(State s, List<Cand> cands) {
    double n = cands.size();
    double sp = 0.0;
    double ss = 0.0;
    for (Cand c : cands) {
      sp += c.p;
    }
    for (Cand c : cands) {
      ss += c.srpt;
    }
    double mp = sp / n;
    double ms = ss / n;
    if (s.seen) {
      s.avgP += 0.1 * (mp - s.avgP);
      s.avgS += 0.1 * (ms - s.avgS);
    } else {
      s.avgP = mp;
      s.avgS = ms;
      s.seen = true;
    }
    double eta = s.avgS > 0.0 && Double.isFinite(s.etaScale) ? s.etaScale * s.avgP / s.avgS : 0.0;
    for (Cand c : cands) {
      c.perf = c.p - eta * c.srpt;
    }
    cands.sort(GraphenePacker::order);
  }

  private static boolean[] contending(int groups, List<Cand> cands, int[] counts, List<Request> requests,
      double[] left) {
    boolean[] v = new boolean[groups];
    Arrays.fill(v, groups <= 1);
    if (groups > 1) {
      for (Cand c : cands) {
        if (counts[c.req] > 0 && fitsMemory(requests.get(c.req).memory, left[0])) {
          v[c.group] = true;
        }
      }
    }
    return v;
  }

  /** DRF: the container's dominant share of the cluster. */
  static double drfFactor(Request r, double[] cluster) {
    double f = 0.0;
    double[] d = {r.memory, r.vcores};
    for (int i = 0; i < 2; i++) {
      if (cluster[i] > 0.0) {
        f = Math.max(f, Math.max(d[i], 0.0) / cluster[i]);
      }
    }
    return f;
  }

  /** Deficit counters with renormalised shares: the Rust library's fairness::Deficits. */
  static final class Deficits {
    final double[] shares;
    final double[] deficit;
    final double limit;
    double maxSeen;

    Deficits(double[] shares, double kappa, double[] start) {
      this.shares = new double[shares.length];
      for (int i = 0; i < shares.length; i++) {
        this.shares[i] = Double.isFinite(shares[i]) && shares[i] > 0.0 ? shares[i] : 0.0;
      }
      this.deficit = new double[shares.length];
      for (int i = 0; i < shares.length && i < start.length; i++) {
        this.deficit[i] = Double.isFinite(start[i]) ? start[i] : 0.0;
      }
      this.limit = Double.isFinite(kappa) ? kappa : Double.NaN;
    }

    private boolean active(boolean[] active, int g, int i) {
      return i == g || (i < active.length && active[i]);
    }

    private double share(boolean[] active, int g, int i) {
      int nActive = 0;
      double sum = 0.0;
      for (int j = 0; j < shares.length; j++) {
        if (active(active, g, j)) {
          nActive++;
          sum += shares[j];
        }
      }
      return sum > 0.0 ? shares[i] / sum : 1.0 / (double) nActive;
    }

    void chargeAmong(int g, double factor, boolean[] active) {
      if (g >= shares.length || !Double.isFinite(factor) || factor <= 0.0) {
        return;
      }
      double[] s = new double[shares.length];
      for (int i = 0; i < shares.length; i++) {
        s[i] = active(active, g, i) ? share(active, g, i) : 0.0;
      }
      for (int i = 0; i < shares.length; i++) {
        if (!active(active, g, i)) {
          continue;
        }
        if (i == g) {
          deficit[i] += factor * (s[i] - 1.0);
        } else {
          deficit[i] += factor * s[i];
        }
        maxSeen = Math.max(maxSeen, deficit[i]);
      }
    }

    int mostOwedAmong(boolean[] active) {
      int best = -1;
      for (int i = 0; i < deficit.length; i++) {
        if (!(i < active.length && active[i])) {
          continue;
        }
        if (best < 0 || deficit[i] > deficit[best]) {
          best = i;
        }
      }
      return best;
    }

    int mustServeAmong(boolean[] active) {
      if (Double.isNaN(limit)) {
        return -1;
      }
      int g = mostOwedAmong(active);
      return g >= 0 && deficit[g] >= limit ? g : -1;
    }

    boolean wouldExceed(int g, double factor, boolean[] active) {
      if (Double.isNaN(limit) || g >= shares.length || !Double.isFinite(factor) || factor <= 0.0) {
        return false;
      }
      for (int i = 0; i < shares.length; i++) {
        if (i != g && active(active, g, i) && deficit[i] + factor * share(active, g, i) > limit) {
          return true;
        }
      }
      return false;
    }
  }
}
