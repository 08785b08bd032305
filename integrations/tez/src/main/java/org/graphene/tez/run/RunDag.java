package org.graphene.tez.run;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A graphene native JSON DAG (as {@code graphene convert} writes it), read for the runner: per
 * stage its tasks' durations, the largest demand of its tasks, and its parents with the edge kind.
 * Every error names the file and the field.
 */
public final class RunDag {
  /** Most tasks the runner accepts in one DAG (each is a Tez task and a container). */
  public static final long MAX_TASKS = 1_000_000L;

  public static final class Parent {
    public final String stage;
    public final boolean oneToOne;

    Parent(String stage, boolean oneToOne) {
      this.stage = stage;
      this.oneToOne = oneToOne;
    }
  }

  public static final class Stage {
    public final String id;
    /** Each task's duration, in the DAG's time units. */
    public final double[] durations;
    /** The largest demand of any of its tasks, per resource name. */
    public final Map<String, Double> demands;
    public final List<Parent> parents;

    Stage(String id, double[] durations, Map<String, Double> demands, List<Parent> parents) {
      this.id = id;
      this.durations = durations;
      this.demands = demands;
      this.parents = parents;
    }

    public double demand(String resource) {
      Double d = demands.get(resource);
      return d == null ? 0.0 : d;
    }
  }

  public final String name;
  public final Map<String, Stage> stages;

  private RunDag(String name, Map<String, Stage> stages) {
    this.name = name;
    this.stages = stages;
  }

  public static RunDag read(File file) throws IOException {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(file);
    } catch (IOException e) {
      throw new IOException(file + ": not a JSON DAG: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IOException(file + ": expected a JSON object with \"stages\"");
    }
    String name = root.path("name").isTextual() ? root.get("name").asText() : null;
    if (name == null || name.isEmpty()) {
      String base = file.getName();
      name = base.endsWith(".json") ? base.substring(0, base.length() - 5) : base;
    }
    JsonNode stages = root.get("stages");
    if (stages == null || !stages.isArray() || stages.size() == 0) {
      throw new IOException(file + ": field \"stages\": expected a non-empty array");
    }
    Map<String, Stage> out = new LinkedHashMap<>();
    long total = 0;
    for (int i = 0; i < stages.size(); i++) {
      JsonNode s = stages.get(i);
      String where = file + ": stages[" + i + "]";
      if (!s.isObject()) {
        throw new IOException(where + ": expected an object");
      }
      JsonNode idNode = s.get("id");
      if (idNode == null || !idNode.isTextual() || idNode.asText().isEmpty()) {
        throw new IOException(where + ".id: expected a non-empty string");
      }
      String id = idNode.asText();
      if (out.containsKey(id)) {
        throw new IOException(where + ".id: stage '" + id + "' appears twice");
      }
      Double stageDuration = null;
      if (s.has("duration")) {
        stageDuration = number(s.get("duration"), where + ".duration");
      }
      Map<String, Double> stageDemands = demands(s.get("demands"), where + ".demands");
      JsonNode tasks = s.get("tasks");
      double[] durations;
      Map<String, Double> most = new LinkedHashMap<>(stageDemands);
      if (tasks != null && tasks.isIntegralNumber()) {
        long n = tasks.asLong();
        if (n < 1 || n > MAX_TASKS - total) {
          throw new IOException(where + ".tasks: expected a count from 1 to " + (MAX_TASKS - total)
              + ", got " + tasks.asText());
        }
        if (stageDuration == null) {
          throw new IOException(where + ".duration: missing (needed with a task count)");
        }
        durations = new double[(int) n];
        java.util.Arrays.fill(durations, stageDuration);
      } else if (tasks != null && tasks.isArray()) {
        if (tasks.size() < 1 || tasks.size() > MAX_TASKS - total) {
          throw new IOException(where + ".tasks: expected 1 to " + (MAX_TASKS - total) + " tasks");
        }
        durations = new double[tasks.size()];
        for (int t = 0; t < tasks.size(); t++) {
          JsonNode task = tasks.get(t);
          String tw = where + ".tasks[" + t + "]";
          if (!task.isObject()) {
            throw new IOException(tw + ": expected an object");
          }
          if (task.has("duration")) {
            durations[t] = number(task.get("duration"), tw + ".duration");
          } else if (stageDuration != null) {
            durations[t] = stageDuration;
          } else {
            throw new IOException(tw + ".duration: missing (and the stage has none)");
          }
          for (Map.Entry<String, Double> e : demands(task.get("demands"), tw + ".demands").entrySet()) {
            most.merge(e.getKey(), e.getValue(), Math::max);
          }
        }
      } else {
        throw new IOException(where + ".tasks: expected a task count or a list of tasks");
      }
      total += durations.length;
      List<Parent> parents = new ArrayList<>();
      JsonNode ps = s.get("parents");
      if (ps != null && !ps.isArray()) {
        throw new IOException(where + ".parents: expected an array");
      }
      if (ps != null) {
        for (int p = 0; p < ps.size(); p++) {
          JsonNode pn = ps.get(p);
          String pw = where + ".parents[" + p + "]";
          if (pn.isTextual()) {
            parents.add(new Parent(pn.asText(), false));
          } else if (pn.isObject() && pn.path("stage").isTextual()) {
            String kind = pn.path("kind").asText("all-to-all");
            if (!kind.equals("all-to-all") && !kind.equals("one-to-one")) {
              throw new IOException(pw + ".kind: expected all-to-all or one-to-one, got '" + kind + "'");
            }
            parents.add(new Parent(pn.get("stage").asText(), kind.equals("one-to-one")));
          } else {
            throw new IOException(pw + ": expected a stage name or {\"stage\": ..., \"kind\": ...}");
          }
        }
      }
      out.put(id, new Stage(id, durations, most, parents));
    }
    for (Stage s : out.values()) {
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (Parent p : s.parents) {
        Stage ps = out.get(p.stage);
        if (ps == null) {
          throw new IOException(file + ": stage '" + s.id + "': parent '" + p.stage + "' is not a stage");
        }
        if (!seen.add(p.stage)) {
          throw new IOException(file + ": stage '" + s.id + "': parent '" + p.stage + "' is listed twice");
        }
        if (p.oneToOne && ps.durations.length != s.durations.length) {
          throw new IOException(file + ": stage '" + s.id + "': one-to-one edge from '" + p.stage
              + "' needs equal task counts (a Tez ONE_TO_ONE edge), got " + ps.durations.length
              + " and " + s.durations.length);
        }
      }
    }
    checkAcyclic(file, out);
    return new RunDag(name, out);
  }

  private static void checkAcyclic(File file, Map<String, Stage> stages) throws IOException {
    Map<String, Integer> state = new LinkedHashMap<>();
    for (String start : stages.keySet()) {
      if (state.containsKey(start)) {
        continue;
      }
      // Iterative depth-first search: 1 = on the stack, 2 = done.
      List<String> stack = new ArrayList<>();
      List<Iterator<Parent>> its = new ArrayList<>();
      stack.add(start);
      its.add(stages.get(start).parents.iterator());
      state.put(start, 1);
      while (!stack.isEmpty()) {
        Iterator<Parent> it = its.get(its.size() - 1);
        if (it.hasNext()) {
          String p = it.next().stage;
          Integer st = state.get(p);
          if (st == null) {
            state.put(p, 1);
            stack.add(p);
            its.add(stages.get(p).parents.iterator());
          } else if (st == 1) {
            throw new IOException(file + ": stage '" + p + "' depends on itself (a cycle)");
          }
        } else {
          state.put(stack.remove(stack.size() - 1), 2);
          its.remove(its.size() - 1);
        }
      }
    }
  }

  private static double number(JsonNode n, String where) throws IOException {
    if (n == null || !n.isNumber() || !Double.isFinite(n.asDouble()) || n.asDouble() < 0) {
      throw new IOException(where + ": expected a finite number >= 0");
    }
    return n.asDouble();
  }

  private static Map<String, Double> demands(JsonNode n, String where) throws IOException {
    Map<String, Double> out = new LinkedHashMap<>();
    if (n == null || n.isNull()) {
      return out;
    }
    if (!n.isObject()) {
      throw new IOException(where + ": expected an object of resource: amount");
    }
    Iterator<Map.Entry<String, JsonNode>> it = n.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), number(e.getValue(), where + "." + e.getKey()));
    }
    return out;
  }

  public long taskCount() {
    long n = 0;
    for (Stage s : stages.values()) {
      n += s.durations.length;
    }
    return n;
  }
}
