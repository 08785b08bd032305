package org.graphene.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class GrapheneTraceTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String GOOD = "{\"am.type\":\"graphene\",\"job.id\":\"j0\",\"job.user\":\"default\","
      + "\"job.queue.name\":\"q0\",\"job.start.ms\":1500,\"job.end.ms\":9000,\"job.tasks\":["
      + "{\"count\":1,\"container.type\":\"s0[0]\",\"container.allocation.id\":0,"
      + "\"container.priority\":1,\"container.duration.ms\":700,\"container.vcores\":2,"
      + "\"container.memory-mb\":4096},"
      + "{\"count\":1,\"container.type\":\"s1[0]<s0\",\"container.allocation.id\":1,"
      + "\"container.priority\":2,\"container.duration.ms\":300,\"container.vcores\":1,"
      + "\"container.memory-mb\":1024}]}";

  private String write(String text) throws Exception {
    File f = tmp.newFile();
    Files.write(f.toPath(), text.getBytes(StandardCharsets.UTF_8));
    return f.getPath();
  }

  @Test
  public void readsTheJobOfEachRumenStandIn() throws Exception {
    String bad = "{\"job.id\":\"j1\",\"job.queue.name\":\"q1\",\"job.start.ms\":2000}";
    GrapheneTrace t = GrapheneTrace.load(write(GOOD + "\n" + bad + "\n"));
    assertEquals(2, t.size());
    GrapheneTrace.Job j = t.byRumenId("job_0_0000");
    assertEquals("j0", j.name);
    assertEquals("q0", j.queue);
    assertEquals(1500, j.startMs);
    JobDag d = JobDag.parse(j.tasks);
    assertEquals(2, d.size());
    assertEquals(4096, d.tasks().get(0).memoryMb);
    assertEquals(300, d.tasks().get(1).durationMs);
    assertEquals(1, d.initiallyReady().size());
    try {
      t.byRumenId("job_0_0001");
      fail("a job without tasks was accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("line 2"));
      assertTrue(e.getMessage(), e.getMessage().contains("job.tasks is missing"));
    }
    try {
      t.byRumenId("job_0_0007");
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("has no line"));
    }
  }

  @Test
  public void malformedFieldsNameTheField() throws Exception {
    String noPriority = GOOD.replace("\"container.priority\":1,", "");
    String badJson = "{\"job.id\": ";
    GrapheneTrace t = GrapheneTrace.load(write(noPriority + "\n" + badJson + "\n"));
    try {
      t.byRumenId("job_0_0000");
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("job.tasks[0]: container.priority"));
    }
    try {
      t.byRumenId("job_0_0001");
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("line 2"));
    }
  }

  @Test
  public void csvQuotingKeepsCommasInReasons() {
    assertEquals("plain", EventLog.csv("plain"));
    assertEquals("\"a, b\"", EventLog.csv("a, b"));
    assertEquals("\"say \"\"hi\"\"\"", EventLog.csv("say \"hi\""));
    assertEquals("", EventLog.csv(null));
  }
}
