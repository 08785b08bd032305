package org.graphene.sls;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * graphene's SLS trace ({@code graphene export-trace --format sls}: {@code sls-jobs.json}, one
 * SLS job object per line), read by the AM itself.
 *
 * <p>Why the AM reads it: Hadoop 3.4.2's {@code AMRunner.startAMFromSLSTrace} parses every job
 * as a {@code Map<String, String>}, and jackson-databind refuses the {@code job.tasks} array
 * ("Cannot deserialize value of type java.lang.String from Array value"), so stock SLS 3.4.2
 * cannot load any SLS-format job with tasks (every one is logged as "Failed to create an AM").
 * The run therefore hands SLS a Rumen trace with one stand-in job per graphene job (Rumen jobs
 * are read by a typed reader that works); SLS creates the AM registered for Rumen's fixed type
 * {@code mapreduce}, and the AM finds its job here by the Rumen job id, {@code job_0_NNNN} for
 * line N. Everything the run depends on (arrival, queue, the tasks, their priorities, sizes,
 * durations and parents) comes from this file, in exactly the form an SLS-format job carries it.
 */
public final class GrapheneTrace {
  /** Configuration key (sls-runner.xml) naming {@code sls-jobs.json}. */
  public static final String FILE_KEY = "yarn.sls.graphene.trace.file";

  /** One job of the trace. */
  public static final class Job {
    public final String name;
    public final String queue;
    public final long startMs;
    public final List<JobDag.TaskIn> tasks;

    Job(String name, String queue, long startMs, List<JobDag.TaskIn> tasks) {
      this.name = name;
      this.queue = queue;
      this.startMs = startMs;
      this.tasks = tasks;
    }
  }

  private static final Map<String, GrapheneTrace> LOADED = new HashMap<>();

  private final String file;
  /** Parsed jobs by line (0-based); an entry is null when the line is malformed. */
  private final List<Job> jobs = new ArrayList<>();
  private final List<String> errors = new ArrayList<>();

  private GrapheneTrace(String file) throws IOException {
    this.file = file;
    ObjectMapper mapper = new ObjectMapper();
    try (BufferedReader r = Files.newBufferedReader(Paths.get(file), StandardCharsets.UTF_8)) {
      String line;
      int n = 0;
      while ((line = r.readLine()) != null) {
        n++;
        if (line.trim().isEmpty()) {
          continue;
        }
        try {
          jobs.add(parseJob(mapper.readTree(line)));
          errors.add(null);
        } catch (IOException | RuntimeException e) {
          // Kept per line: a malformed job is reported (and skipped) by its own AM.
          jobs.add(null);
          errors.add(file + " line " + n + ": " + e.getMessage());
        }
      }
    }
  }

  /** The trace at {@code file}, read once per run and shared by every AM. */
  public static synchronized GrapheneTrace load(String file) throws IOException {
    GrapheneTrace t = LOADED.get(file);
    if (t == null) {
      t = new GrapheneTrace(file);
      LOADED.put(file, t);
    }
    return t;
  }

  /** The job a Rumen stand-in {@code job_0_NNNN} stands for (line NNNN, from 0). */
  public Job byRumenId(String rumenId) {
    int us = rumenId == null ? -1 : rumenId.lastIndexOf('_');
    int k;
    try {
      k = Integer.parseInt(rumenId.substring(us + 1));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Rumen job id '" + rumenId + "' is not job_0_N");
    }
    if (k < 0 || k >= jobs.size()) {
      throw new IllegalArgumentException("Rumen job " + rumenId + " has no line in " + file
          + " (" + jobs.size() + " jobs)");
    }
    if (jobs.get(k) == null) {
      throw new IllegalArgumentException(errors.get(k));
    }
    return jobs.get(k);
  }

  public int size() {
    return jobs.size();
  }

  private static String text(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull() || v.isContainerNode()) {
      throw new IllegalArgumentException(where + ": " + key + " is missing or not a value");
    }
    return v.asText();
  }

  private static long number(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !(v.isIntegralNumber() || v.isTextual())) {
      throw new IllegalArgumentException(where + ": " + key + " is missing or not a whole number");
    }
    try {
      return v.isTextual() ? Long.parseLong(v.asText()) : v.asLong();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(where + ": " + key + " '" + v.asText()
          + "' is not a whole number");
    }
  }

  static Job parseJob(JsonNode job) {
    if (job == null || !job.isObject()) {
      throw new IllegalArgumentException("not a JSON object");
    }
    String name = text(job, "job.id", "job");
    String where = "job " + name;
    String queue = text(job, "job.queue.name", where);
    long start = number(job, "job.start.ms", where);
    JsonNode ts = job.get("job.tasks");
    if (ts == null || !ts.isArray() || ts.size() == 0) {
      throw new IllegalArgumentException(where + ": job.tasks is missing or empty");
    }
    List<JobDag.TaskIn> tasks = new ArrayList<>();
    for (int i = 0; i < ts.size(); i++) {
      JsonNode t = ts.get(i);
      String tw = where + ": job.tasks[" + i + "]";
      if (!t.isObject()) {
        throw new IllegalArgumentException(tw + " is not an object");
      }
      long count = t.has("count") ? number(t, "count", tw) : 1;
      if (count != 1) {
        throw new IllegalArgumentException(tw + ": count " + count + " (one container per task)");
      }
      long priority = number(t, "container.priority", tw);
      if (priority < 0 || priority > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(tw + ": container.priority " + priority
            + " is out of range");
      }
      tasks.add(new JobDag.TaskIn(text(t, "container.type", tw), (int) priority,
          number(t, "container.vcores", tw), number(t, "container.memory-mb", tw),
          number(t, "container.duration.ms", tw)));
    }
    return new Job(name, queue, start, tasks);
  }
}
