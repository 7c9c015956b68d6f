package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.cli.CliRun;
import org.spatialingest.config.JobConfig;
import org.spatialingest.it.ChildJvm;
import org.spatialingest.local.TelemetryGenerator;

/**
 * TLS as a user's broker has it: a real broker JVM ({@code kafka.Kafka} from the Kafka server jar,
 * with a {@code server.properties}) with a SASL_SSL listener (SCRAM-SHA-512), a CA and a broker
 * certificate for {@code localhost} made here with {@code keytool}, ACLs on ({@code
 * allow.everyone.if.no.acl.found=false}). The job's client configuration is the one operations.md
 * shows (the CA as a PEM truststore). With the ACLs operations.md lists the job commits every
 * record (rows, group offsets, dead letters; {@code plan --topic} samples with the same
 * properties); an untrusted certificate, a wrong host name and a wrong password each stop the start
 * with one line naming the cause. The broker's other listener (PLAINTEXT, super user ANONYMOUS) is
 * the test's own, for setting up topics, users and ACLs.
 */
class TlsKafkaTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  private static final String TOPIC = "tls";
  private static final String DEAD_LETTERS = "tls-dlq";
  private static final String GROUP = "tls-group";
  private static final String USER = "ingest";
  private static final String PASSWORD = "ingest-tls-pw-3b9e";
  private static final String STORE_PASSWORD = "store-pw-8c21";

  @TempDir static Path dir;
  private static ChildJvm broker;
  private static Admin admin;
  private static int tlsPort;
  private static int internalPort;
  private static Path caPem;
  private static Path otherCaPem;

  @BeforeAll
  static void startBroker() throws Exception {
    long t0 = System.nanoTime();
    caPem = certificateAuthority("ca");
    otherCaPem = certificateAuthority("other-ca");
    Path keystore = brokerKeystore("ca", "localhost");
    long certificates = System.nanoTime();
    tlsPort = ChildJvm.freePort();
    internalPort = ChildJvm.freePort();
    int controllerPort = ChildJvm.freePort();
    Path properties = dir.resolve("server.properties");
    Files.writeString(
        properties,
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.voters=1@localhost:" + controllerPort,
            "listeners=SASL_SSL://localhost:"
                + tlsPort
                + ",INTERNAL://localhost:"
                + internalPort
                + ",CONTROLLER://localhost:"
                + controllerPort,
            "advertised.listeners=SASL_SSL://localhost:"
                + tlsPort
                + ",INTERNAL://localhost:"
                + internalPort,
            "listener.security.protocol.map=SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name=INTERNAL",
            "controller.listener.names=CONTROLLER",
            "log.dirs=" + dir.resolve("kafka-logs"),
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=false",
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found=false",
            "super.users=User:ANONYMOUS",
            "sasl.enabled.mechanisms=SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
                + "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "ssl.keystore.type=PKCS12",
            "ssl.keystore.location=" + keystore,
            "ssl.keystore.password=" + STORE_PASSWORD,
            "ssl.key.password=" + STORE_PASSWORD,
            ""));
    List<Path> classpath =
        Stream.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
            .map(Path::of)
            .toList();
    // what `kafka-storage.sh format` does, in this JVM (a JVM less to start)
    String logs = dir.resolve("kafka-logs").toString();
    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(1)
        .setClusterId(Uuid.randomUuid().toString())
        .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
        .setControllerListenerName("CONTROLLER")
        .setMetadataLogDirectory(logs)
        .addDirectory(logs)
        .run();
    long formatted = System.nanoTime();
    broker =
        ChildJvm.start(
            "kafka broker (SASL_SSL)",
            classpath,
            List.of("-Xmx512m"),
            "kafka.Kafka",
            List.of(properties.toString()),
            Map.of(),
            dir.resolve("broker.log"));
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + internalPort);
    admin = Admin.create(p);
    ChildJvm.await(
        "the broker answers",
        Duration.ofSeconds(90),
        () -> admin.describeCluster().nodes().get().size() == 1);
    admin
        .createTopics(
            List.of(new NewTopic(TOPIC, 3, (short) 1), new NewTopic(DEAD_LETTERS, 1, (short) 1)))
        .all()
        .get();
    admin
        .alterUserScramCredentials(
            List.of(
                new UserScramCredentialUpsertion(
                    USER, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), PASSWORD)))
        .all()
        .get();
    ChildJvm.await(
        "the broker knows the user",
        Duration.ofSeconds(30),
        () -> admin.describeUserScramCredentials(List.of(USER)).users().get().contains(USER));
    // exactly the ACLs operations.md lists
    List<AclBinding> acls = new ArrayList<>();
    acls.add(allow(ResourceType.TOPIC, TOPIC, AclOperation.READ));
    acls.add(allow(ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE));
    acls.add(allow(ResourceType.GROUP, GROUP, AclOperation.READ));
    acls.add(allow(ResourceType.TOPIC, DEAD_LETTERS, AclOperation.WRITE));
    admin.createAcls(acls).all().get();
    ChildJvm.await( // ACLs reach the broker's authorizer through the metadata log
        "the broker knows the ACLs",
        Duration.ofSeconds(30),
        () -> admin.describeAcls(AclBindingFilter.ANY).values().get().size() == acls.size());
    System.out.printf(
        "TLS broker set-up: certificates %d ms, format %d ms, broker with user and ACLs %d ms%n",
        (certificates - t0) / 1_000_000,
        (formatted - certificates) / 1_000_000,
        (System.nanoTime() - formatted) / 1_000_000);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (broker != null) {
      broker.kill(); // its data is the test's temporary folder: no controlled shutdown needed
    }
  }

  @Test
  void theJobCommitsEveryRecordOverSaslSsl(@TempDir Path warehouse) throws Exception {
    int valid = 200;
    int malformed = 5;
    TelemetryGenerator generator = new TelemetryGenerator(5, 10, 0, 0);
    long t0 = System.currentTimeMillis() - 60_000;
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:" + internalPort);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < valid; i++) {
        producer.send(new ProducerRecord<>(TOPIC, generator.next(t0 + i).json()));
      }
      for (int i = 0; i < malformed; i++) {
        producer.send(
            new ProducerRecord<>(TOPIC, ("{not json " + i).getBytes(StandardCharsets.UTF_8)));
      }
      producer.flush();
    }

    JobConfig config = config(warehouse, "localhost", caPem, PASSWORD);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("tls");

    assertThat(TestKit.rows(TestKit.table(config))).hasSize(valid);
    long committed = 0;
    long deadline = System.currentTimeMillis() + 30_000;
    while (committed < valid + malformed && System.currentTimeMillis() < deadline) {
      Thread.sleep(250); // published after the commit, asynchronously
      committed =
          admin
              .listConsumerGroupOffsets(GROUP)
              .partitionsToOffsetAndMetadata()
              .get()
              .values()
              .stream()
              .mapToLong(OffsetAndMetadata::offset)
              .sum();
    }
    assertThat(committed)
        .as("the group's offsets (the table's positions) cover every record")
        .isEqualTo(valid + malformed);
    TopicPartition dlq = new TopicPartition(DEAD_LETTERS, 0);
    assertThat(admin.listOffsets(Map.of(dlq, OffsetSpec.latest())).all().get().get(dlq).offset())
        .as("every reject produced to the dead-letter topic over SASL_SSL")
        .isEqualTo(malformed);

    // plan --topic samples over SASL_SSL with the same kafka.properties
    Path yaml = warehouse.resolve("job.yaml");
    Files.writeString(yaml, yaml(config));
    CliRun plan =
        CliRun.of(
            "plan",
            "--topic",
            TOPIC,
            "--bootstrap",
            config.bootstrapServers(),
            "--config",
            yaml.toString(),
            "--sample-records",
            "100",
            "--rate",
            "10");
    assertThat(plan.exitCode()).as(plan.err()).isZero();
  }

  @Test
  void anUntrustedCertificateStopsTheStartNamingIt(@TempDir Path warehouse) throws Exception {
    assertStartRefused(
        config(warehouse, "localhost", otherCaPem, PASSWORD),
        "TLS handshake failed: the broker's certificate is not trusted");
  }

  @Test
  void aCertificateForAnotherHostStopsTheStartNamingIt(@TempDir Path warehouse) throws Exception {
    // the certificate names localhost only; 127.0.0.1 is the same broker under another name
    assertStartRefused(
        config(warehouse, "127.0.0.1", caPem, PASSWORD),
        "TLS handshake failed: the broker's certificate is for another host name");
  }

  @Test
  void aWrongPasswordStopsTheStartNamingAuthentication(@TempDir Path warehouse) throws Exception {
    assertStartRefused(
        config(warehouse, "localhost", caPem, "wrong-pw-6a0f"), "authentication failed");
  }

  private static void assertStartRefused(JobConfig config, String cause) throws Exception {
    Path yaml = Files.createTempFile(dir, "job", ".yaml");
    Files.writeString(yaml, yaml(config));
    long start = System.nanoTime();
    CliRun run = CliRun.of("run", "--config", yaml.toString());
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    System.out.println("start refused: " + run.err().strip());
    assertThat(run.exitCode()).as(run.err()).isEqualTo(3);
    assertThat(run.err().strip().lines()).as(run.err()).hasSize(1);
    assertThat(run.err()).contains(cause).doesNotContain(PASSWORD).doesNotContain("wrong-pw");
    assertThat(took).as("the start ends within a minute").isLessThan(Duration.ofSeconds(60));
  }

  private static String yaml(JobConfig config) {
    StringBuilder out = new StringBuilder();
    config
        .toMap()
        .forEach((k, v) -> out.append(k).append(": '").append(v.replace("'", "''")).append("'\n"));
    return out.toString();
  }

  /** The client configuration operations.md shows for SASL_SSL with SCRAM and a PEM truststore. */
  private static JobConfig config(Path warehouse, String host, Path truststore, String password) {
    Map<String, String> keys = new HashMap<>();
    keys.put("kafka.properties.security.protocol", "SASL_SSL");
    keys.put("kafka.properties.sasl.mechanism", "SCRAM-SHA-512");
    keys.put(
        "kafka.properties.sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + USER
            + "\" password=\""
            + password
            + "\";");
    keys.put("kafka.properties.ssl.truststore.type", "PEM");
    keys.put("kafka.properties.ssl.truststore.location", truststore.toString());
    keys.put("kafka.group-id", GROUP);
    keys.put("kafka.starting-offsets", "table");
    keys.put("rejects.dead-letter-topic", DEAD_LETTERS);
    keys.put("sink.max-latency", "1s");
    return TestKit.config(host + ":" + tlsPort, TOPIC, warehouse, keys);
  }

  private static AclBinding allow(ResourceType type, String name, AclOperation op) {
    return new AclBinding(
        new ResourcePattern(type, name, PatternType.LITERAL),
        new AccessControlEntry("User:" + USER, "*", op, AclPermissionType.ALLOW));
  }

  /** A CA key pair in {@code <name>.p12}; returns its certificate as PEM. */
  private static Path certificateAuthority(String name) throws Exception {
    Path store = dir.resolve(name + ".p12");
    keytool(
        "-genkeypair",
        "-alias",
        name,
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-validity",
        "2",
        "-dname",
        "CN=" + name,
        "-ext",
        "bc:c",
        "-keystore",
        store.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        STORE_PASSWORD);
    return writePem(dir.resolve(name + ".pem"), keyStore(store).getCertificate(name));
  }

  /** The broker's key and a certificate for {@code host}, signed by the CA {@code ca}. */
  private static Path brokerKeystore(String ca, String host) throws Exception {
    Path store = dir.resolve("broker.p12");
    keytool(
        "-genkeypair",
        "-alias",
        "broker",
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-validity",
        "2",
        "-dname",
        "CN=" + host,
        "-keystore",
        store.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        STORE_PASSWORD);
    Path csr = dir.resolve("broker.csr");
    keytool(
        "-certreq",
        "-alias",
        "broker",
        "-keystore",
        store.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-file",
        csr.toString());
    Path signed = dir.resolve("broker.pem");
    keytool(
        "-gencert",
        "-alias",
        ca,
        "-keystore",
        dir.resolve(ca + ".p12").toString(),
        "-storepass",
        STORE_PASSWORD,
        "-infile",
        csr.toString(),
        "-outfile",
        signed.toString(),
        "-rfc",
        "-validity",
        "2",
        "-ext",
        "SAN=dns:" + host);
    // the key with its chain (broker certificate, CA), as keytool -importcert of both would store
    // it
    KeyStore broker = keyStore(store);
    Certificate[] chain;
    try (InputStream in = Files.newInputStream(signed)) {
      chain =
          new Certificate[] {
            CertificateFactory.getInstance("X.509").generateCertificate(in),
            keyStore(dir.resolve(ca + ".p12")).getCertificate(ca)
          };
    }
    char[] password = STORE_PASSWORD.toCharArray();
    broker.setKeyEntry("broker", broker.getKey("broker", password), password, chain);
    try (OutputStream out = Files.newOutputStream(store)) {
      broker.store(out, password);
    }
    return store;
  }

  private static KeyStore keyStore(Path p12) throws Exception {
    return KeyStore.getInstance(p12.toFile(), STORE_PASSWORD.toCharArray());
  }

  private static Path writePem(Path file, Certificate certificate) throws Exception {
    String base64 =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(certificate.getEncoded());
    Files.writeString(
        file, "-----BEGIN CERTIFICATE-----\n" + base64 + "\n-----END CERTIFICATE-----\n");
    return file;
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as("keytool %s: %s", args[0], output).isZero();
  }
}
