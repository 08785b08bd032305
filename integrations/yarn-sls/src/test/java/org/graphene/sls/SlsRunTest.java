package org.graphene.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.SLSRunner.TraceType;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The AM inside a real, in-process SLSRunner with the real CapacityScheduler (SLS's
 * SLSCapacityScheduler): a good job runs to the end with its dependencies and priorities
 * honoured, the AM reports and skips a job with a task larger than the scheduler allows, SLS
 * refuses a job in an unknown queue, and the run goes on.
 */
public class SlsRunTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static String task(String type, int priority, int vcores, int mb, int ms, int pos) {
    return "{\"count\":1,\"container.type\":\"" + type + "\",\"container.allocation.id\":" + pos
        + ",\"container.priority\":" + priority + ",\"container.duration.ms\":" + ms
        + ",\"container.vcores\":" + vcores + ",\"container.memory-mb\":" + mb + "}";
  }

  private static String job(String id, String queue, long start, String... tasks) {
    return "{\"am.type\":\"graphene\",\"job.id\":\"" + id + "\",\"job.user\":\"default\","
        + "\"job.queue.name\":\"" + queue + "\",\"job.start.ms\":" + start
        + ",\"job.end.ms\":" + (start + 5000) + ",\"job.tasks\":[" + String.join(",", tasks)
        + "]}";
  }

  private static String rumen(int k, String queue, long start) {
    String id = String.format("%04d", k);
    return "{\"jobID\":\"job_0_" + id + "\",\"user\":\"default\",\"queue\":\"" + queue
        + "\",\"submitTime\":" + start + ",\"launchTime\":" + start + ",\"finishTime\":"
        + (start + 1000) + ",\"outcome\":\"SUCCESS\",\"jobtype\":\"JAVA\",\"totalMaps\":1,"
        + "\"totalReduces\":0,\"mapTasks\":[{\"taskID\":\"task_0_" + id + "_m_000000\","
        + "\"taskType\":\"MAP\",\"taskStatus\":\"SUCCESS\",\"startTime\":" + start
        + ",\"finishTime\":" + (start + 1) + ",\"attempts\":[{\"attemptID\":\"attempt_0_" + id
        + "_m_000000_0\",\"hostName\":\"/default-rack/node0\",\"startTime\":" + start
        + ",\"finishTime\":" + (start + 1) + ",\"result\":\"SUCCESS\"}]}],\"reduceTasks\":[],"
        + "\"otherTasks\":[]}";
  }

  private static List<String[]> events(File f) throws Exception {
    List<String[]> out = new ArrayList<>();
    for (String line : Files.readAllLines(f.toPath(), StandardCharsets.UTF_8)) {
      if (!line.startsWith("event,")) {
        // The reason column may be quoted and hold commas: keep it whole.
        out.add(line.split(",", 12));
      }
    }
    return out;
  }

  @Test(timeout = 120000)
  public void theAmRunsDagsInTheRealCapacitySchedulerAndSkipsWhatItCannotRun() throws Exception {
    File dir = tmp.newFolder();
    // good: 2 roots (priorities 1, 2), a shuffle child pair, and a one-to-one grandchild pair.
    String good = job("good", "q0", 0,
        task("a[0]", 1, 4, 2048, 300, 0), task("a[1]", 2, 4, 2048, 300, 1),
        task("b[0]<a", 3, 2, 1024, 200, 2), task("b[1]<a", 4, 2, 1024, 200, 3),
        task("c[0]<~b", 5, 1, 512, 100, 4), task("c[1]<~b", 6, 1, 512, 100, 5));
    String lost = job("lost", "nope", 100, task("x[0]", 1, 1, 512, 100, 0));
    String huge = job("huge", "q1", 200, task("y[0]", 1, 64, 512, 100, 0));
    File slsJobs = new File(dir, "sls-jobs.json");
    Files.write(slsJobs.toPath(), (good + "\n" + lost + "\n" + huge + "\n")
        .getBytes(StandardCharsets.UTF_8));
    File rumenJobs = new File(dir, "rumen-jobs.json");
    Files.write(rumenJobs.toPath(), (rumen(0, "q0", 0) + "\n" + rumen(1, "nope", 100) + "\n"
        + rumen(2, "q1", 200) + "\n").getBytes(StandardCharsets.UTF_8));
    File nodes = new File(dir, "nodes.json");
    Files.write(nodes.toPath(), ("{\"rack\":\"default-rack\",\"nodes\":["
        + "{\"node\":\"node0\",\"memory-mb\":8192,\"vcores\":8},"
        + "{\"node\":\"node1\",\"memory-mb\":8192,\"vcores\":8}]}\n")
        .getBytes(StandardCharsets.UTF_8));
    File eventsFile = new File(dir, "events.csv");
    File out = new File(dir, "out");
    out.mkdirs();

    SecurityUtil.setTokenServiceUseIp(false);
    Configuration conf = new Configuration(false);
    conf.set("yarn.resourcemanager.scheduler.class",
        "org.apache.hadoop.yarn.sls.scheduler.SLSCapacityScheduler");
    conf.set("yarn.sls.am.type.mapreduce", GrapheneAMSimulator.class.getName());
    conf.set("yarn.sls.am.type.graphene", GrapheneAMSimulator.class.getName());
    conf.set(GrapheneTrace.FILE_KEY, slsJobs.getPath());
    conf.set(EventLog.FILE_KEY, eventsFile.getPath());
    conf.setInt("yarn.sls.nm.heartbeat.interval.ms", 50);
    conf.setInt("yarn.sls.am.heartbeat.interval.ms", 50);
    conf.setInt("yarn.sls.nm.memory.mb", 8192);
    conf.setInt("yarn.sls.nm.vcores", 8);
    conf.setInt("yarn.sls.am.container.memory", 1);
    conf.setInt("yarn.sls.am.container.vcores", 1);
    conf.setInt("yarn.scheduler.minimum-allocation-mb", 1);
    conf.setInt("yarn.scheduler.maximum-allocation-mb", 8192);
    conf.setInt("yarn.scheduler.maximum-allocation-vcores", 8);
    conf.set("yarn.sls.runner.metrics.switch", "ON");
    conf.setInt("yarn.sls.metrics.web.address.port", 0);
    for (String k : new String[] {"address", "scheduler.address", "resource-tracker.address",
        "admin.address", "webapp.address"}) {
      conf.set("yarn.resourcemanager." + k, "127.0.0.1:0");
    }
    conf.set("yarn.sls.metrics.output", out.getPath());
    SLSRunner sls = new SLSRunner(conf);
    sls.setSimulationParams(TraceType.RUMEN, new String[] {rumenJobs.getPath()},
        nodes.getPath(), out.getPath(), Collections.<String>emptySet(), false);
    sls.start();
    long deadline = System.currentTimeMillis() + 90000;
    boolean done = false;
    while (!done && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
      done = eventsFile.exists()
          && new String(Files.readAllBytes(eventsFile.toPath()), StandardCharsets.UTF_8)
              .contains("\ndone,");
    }
    sls.stop();
    assertTrue("the good job did not finish", done);

    List<String[]> ev = events(eventsFile);
    Map<String, String> skips = new HashMap<>();
    Map<String, Long> start = new HashMap<>();
    Map<String, Long> end = new HashMap<>();
    Map<String, Integer> startCall = new HashMap<>();
    for (String[] e : ev) {
      if (e[0].equals("skip")) {
        skips.put(e[2], e[11]);
      } else if (e[0].equals("start")) {
        start.put(e[5], Long.parseLong(e[1]));
        startCall.put(e[5], Integer.parseInt(e[11].substring(5)));
      } else if (e[0].equals("end")) {
        end.put(e[5], Long.parseLong(e[1]));
      }
    }
    // A job in an unknown queue never reaches the AM: SLS itself refuses it while reading the
    // trace (AMRunner: "Can't find the queue by the given name: nope"), and the run goes on.
    assertEquals(1, skips.size());
    for (String[] e : ev) {
      assertTrue("job 'lost' ran", !e[2].equals("lost"));
    }
    assertTrue(skips.get("huge"), skips.get("huge").contains("64 vcores")
        && skips.get("huge").contains("y[0]"));
    assertEquals(6, start.size());
    assertEquals(6, end.size());
    // All-to-all: both b's after both a's; one-to-one: c[i] after b[i].
    for (String b : new String[] {"b[0]", "b[1]"}) {
      assertTrue(start.get(b) >= Math.max(end.get("a[0]"), end.get("a[1]")));
    }
    assertTrue(start.get("c[0]") >= end.get("b[0]"));
    assertTrue(start.get("c[1]") >= end.get("b[1]"));
    // Priority 1 is never granted in a later answer than priority 2 (both asked at once, both
    // fit: 8 vcores per node).
    assertTrue(startCall.get("a[0]") <= startCall.get("a[1]"));
  }
}
