package org.graphene.sls;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One job's tasks and their dependencies, rebuilt from the per-task entries of a graphene SLS
 * trace, plus the bookkeeping that decides when a task may be requested.
 *
 * <p>SLS hands an AM simulator only what {@code ContainerSimulator} keeps of a trace entry
 * (resource, duration, host, priority, type, execution type, allocation id, request delay); any
 * other key of the entry is dropped in {@code AMDefinitionSLS.getTaskContainers}. So the trace
 * carries the task's identity and its parents in {@code container.type}, the one free-form
 * string SLS passes through unchanged: {@code stage[index]} for a task without parents, else
 * {@code stage[index]<p1;~p2}, where a bare parent stage is an all-to-all (shuffle) edge and a
 * {@code ~} marks a one-to-one edge (task i waits for task i of the parent), as in graphene's
 * native trace CSV. Edges are per stage, so the type string stays short for wide stages.
 *
 * <p>This class has no SLS or YARN dependency so that the dependency rules are unit-tested on
 * their own; {@link GrapheneAMSimulator} feeds it SLS's containers.
 */
public final class JobDag {
  /** What the trace says about one task. */
  public static final class TaskIn {
    final String type;
    final int priority;
    final long vcores;
    final long memoryMb;
    final long durationMs;

    public TaskIn(String type, int priority, long vcores, long memoryMb, long durationMs) {
      this.type = type;
      this.priority = priority;
      this.vcores = vcores;
      this.memoryMb = memoryMb;
      this.durationMs = durationMs;
    }
  }

  /** A task of the job; {@code number} is its position in the trace (its allocation id). */
  public static final class Task {
    public final int number;
    public final String stage;
    public final int index;
    public final int priority;
    public final long vcores;
    public final long memoryMb;
    public final long durationMs;
    /** Parents not finished yet; the task may be requested when this reaches 0. */
    int waiting;

    Task(int number, String stage, int index, int priority, long vcores, long memoryMb,
        long durationMs) {
      this.number = number;
      this.stage = stage;
      this.index = index;
      this.priority = priority;
      this.vcores = vcores;
      this.memoryMb = memoryMb;
      this.durationMs = durationMs;
    }

    public String id() {
      return stage + "[" + index + "]";
    }
  }

  private static final Pattern TASK_ID = Pattern.compile("^(.+)\\[(\\d+)\\]$");

  /** A child stage's edge from a parent stage. */
  private static final class Edge {
    final String child;
    final boolean oneToOne;

    Edge(String child, boolean oneToOne) {
      this.child = child;
      this.oneToOne = oneToOne;
    }
  }

  private final List<Task> tasks = new ArrayList<>();
  /** Tasks of each stage by index, stages in order of first appearance. */
  private final Map<String, Task[]> stages = new LinkedHashMap<>();
  private final Map<String, List<Edge>> children = new HashMap<>();
  private final boolean[] finished;
  private int finishedCount;

  private JobDag(int n) {
    this.finished = new boolean[n];
  }

  /**
   * Builds the DAG of one job; throws {@link IllegalArgumentException} naming the entry and
   * what is wrong with it (a malformed type, a task twice, a missing index, a parent stage that
   * is not in the job, a one-to-one edge between stages of different sizes, a cycle).
   */
  public static JobDag parse(List<TaskIn> entries) {
    if (entries.isEmpty()) {
      throw new IllegalArgumentException("the job has no tasks");
    }
    JobDag dag = new JobDag(entries.size());
    Map<String, List<Task>> byStage = new LinkedHashMap<>();
    Map<String, List<String>> parentSpec = new LinkedHashMap<>();
    for (int i = 0; i < entries.size(); i++) {
      TaskIn e = entries.get(i);
      String what = "job.tasks[" + i + "] container.type '" + e.type + "'";
      if (e.type == null || e.type.isEmpty()) {
        throw new IllegalArgumentException("job.tasks[" + i + "] has no container.type; a "
            + "graphene trace names the task there as stage[index]<parents");
      }
      String head = e.type;
      String tail = null;
      int lt = e.type.indexOf('<');
      if (lt >= 0) {
        head = e.type.substring(0, lt);
        tail = e.type.substring(lt + 1);
      }
      Matcher m = TASK_ID.matcher(head);
      if (!m.matches()) {
        throw new IllegalArgumentException(what + " is not stage[index] or stage[index]<parents");
      }
      int index;
      try {
        index = Integer.parseInt(m.group(2));
      } catch (NumberFormatException x) {
        throw new IllegalArgumentException(what + ": index out of range");
      }
      if (e.durationMs <= 0 || e.vcores <= 0 || e.memoryMb <= 0) {
        throw new IllegalArgumentException("job.tasks[" + i + "]: duration, vcores and memory "
            + "must be positive");
      }
      String stage = m.group(1);
      Task t = new Task(i, stage, index, e.priority, e.vcores, e.memoryMb, e.durationMs);
      dag.tasks.add(t);
      byStage.computeIfAbsent(stage, k -> new ArrayList<>()).add(t);
      List<String> parents = new ArrayList<>();
      if (tail != null && !tail.isEmpty()) {
        for (String p : tail.split(";", -1)) {
          if (p.isEmpty() || p.equals("~")) {
            throw new IllegalArgumentException(what + ": empty parent name");
          }
          parents.add(p);
        }
      }
      List<String> prev = parentSpec.putIfAbsent(stage, parents);
      if (prev != null && !prev.equals(parents)) {
        throw new IllegalArgumentException(what + ": parents differ from those of stage '"
            + stage + "' given earlier (" + String.join(";", prev) + ")");
      }
    }
    for (Map.Entry<String, List<Task>> s : byStage.entrySet()) {
      List<Task> ts = s.getValue();
      Task[] arr = new Task[ts.size()];
      for (Task t : ts) {
        if (t.index >= arr.length) {
          throw new IllegalArgumentException("job.tasks[" + t.number + "] '" + t.id()
              + "': index " + t.index + " but stage '" + s.getKey() + "' has " + arr.length
              + " tasks (indices run 0.." + (arr.length - 1) + ")");
        }
        if (arr[t.index] != null) {
          throw new IllegalArgumentException("job.tasks[" + t.number + "] '" + t.id()
              + "' appears twice (first as job.tasks[" + arr[t.index].number + "])");
        }
        arr[t.index] = t;
      }
      dag.stages.put(s.getKey(), arr);
    }
    for (Map.Entry<String, List<String>> s : parentSpec.entrySet()) {
      String child = s.getKey();
      Task[] childTasks = dag.stages.get(child);
      for (String p : s.getValue()) {
        boolean one = p.startsWith("~");
        String parent = one ? p.substring(1) : p;
        Task[] parentTasks = dag.stages.get(parent);
        if (parentTasks == null) {
          throw new IllegalArgumentException("stage '" + child + "' (job.tasks["
              + childTasks[0].number + "]): parent stage '" + parent + "' is not in the job");
        }
        if (parent.equals(child)) {
          throw new IllegalArgumentException("stage '" + child + "' is its own parent");
        }
        if (one && parentTasks.length != childTasks.length) {
          throw new IllegalArgumentException("stage '" + child + "': one-to-one edge from '"
              + parent + "' needs equal task counts (" + parentTasks.length + " vs "
              + childTasks.length + ")");
        }
        dag.children.computeIfAbsent(parent, k -> new ArrayList<>()).add(new Edge(child, one));
        for (Task c : childTasks) {
          c.waiting += one ? 1 : parentTasks.length;
        }
      }
    }
    dag.checkAcyclic();
    return dag;
  }

  /** Kahn's algorithm over stages: a cycle would leave tasks waiting forever. */
  private void checkAcyclic() {
    Map<String, Integer> indeg = new HashMap<>();
    for (String s : stages.keySet()) {
      indeg.put(s, 0);
    }
    for (List<Edge> es : children.values()) {
      for (Edge e : es) {
        indeg.merge(e.child, 1, Integer::sum);
      }
    }
    List<String> ready = new ArrayList<>();
    for (Map.Entry<String, Integer> e : indeg.entrySet()) {
      if (e.getValue() == 0) {
        ready.add(e.getKey());
      }
    }
    int seen = 0;
    while (!ready.isEmpty()) {
      String s = ready.remove(ready.size() - 1);
      seen++;
      for (Edge e : children.getOrDefault(s, new ArrayList<>())) {
        if (indeg.merge(e.child, -1, Integer::sum) == 0) {
          ready.add(e.child);
        }
      }
    }
    if (seen != stages.size()) {
      throw new IllegalArgumentException("the stages' parents form a cycle");
    }
  }

  public List<Task> tasks() {
    return tasks;
  }

  public int size() {
    return tasks.size();
  }

  public int finishedCount() {
    return finishedCount;
  }

  public boolean allFinished() {
    return finishedCount == tasks.size();
  }

  public boolean isFinished(int number) {
    return finished[number];
  }

  /** Tasks whose parents have all finished at the start (the roots), in trace order. */
  public List<Task> initiallyReady() {
    List<Task> out = new ArrayList<>();
    for (Task t : tasks) {
      if (t.waiting == 0) {
        out.add(t);
      }
    }
    return out;
  }

  /**
   * Marks task {@code number} finished and returns the tasks that became ready because of it
   * (every parent now finished). A second call for the same task returns nothing, so a
   * duplicate completion report can never release a child early.
   */
  public List<Task> finish(int number) {
    List<Task> out = new ArrayList<>();
    if (finished[number]) {
      return out;
    }
    finished[number] = true;
    finishedCount++;
    Task t = tasks.get(number);
    for (Edge e : children.getOrDefault(t.stage, new ArrayList<>())) {
      Task[] cs = stages.get(e.child);
      if (e.oneToOne) {
        release(cs[t.index], out);
      } else {
        for (Task c : cs) {
          release(c, out);
        }
      }
    }
    return out;
  }

  private static void release(Task c, List<Task> out) {
    c.waiting--;
    if (c.waiting == 0) {
      out.add(c);
    }
  }
}
