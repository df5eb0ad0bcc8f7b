#!/usr/bin/env python3
# Aggregates `jfr print --events jdk.ExecutionSample FILE` outputs (one or more): Java samples by thread, by the
# first library frame of the stack (muster, jetcd, grpc, netty, ...), and by top frame. Used for
# docs/registrations-burst-profile.txt (the scale bench with MUSTER_BENCH_JFR set).
import sys, re, collections
# parse `jfr print --events jdk.ExecutionSample FILE` output: aggregate top frames and packages
top=collections.Counter(); pkg=collections.Counter(); threads=collections.Counter(); n=0
for f in sys.argv[1:]:
    txt=open(f).read()
    for ev in txt.split('jdk.ExecutionSample {')[1:]:
        m=re.search(r'sampledThread = "([^"]*)"',ev)
        th=re.sub(r'\d+','N',m.group(1)) if m else '?'
        st=re.search(r'stackTrace = \[\n(.*?)\n\s*\]',ev,re.S)
        if not st: continue
        frames=[l.strip() for l in st.group(1).split('\n') if l.strip() and l.strip()!='...']
        if not frames: continue
        n+=1; threads[th]+=1
        top[re.sub(r'\s+line:.*','',frames[0])]+=1
        # attribute to the first frame in a "library" bucket
        def bucket(fr):
            for p,b in [('dev.muster','muster'),('io.etcd.jetcd','jetcd'),('io.grpc','grpc'),('io.netty','netty'),('io.vertx','vertx'),('com.google.protobuf','protobuf'),('com.fasterxml','jackson'),('ch.qos.logback','logback'),('org.slf4j','slf4j')]:
                if fr.startswith(p): return b
            return None
        b=None
        for fr in frames:
            b=bucket(fr)
            if b: break
        pkg[b or 'jdk-only']+=1
print("samples",n)
print("by thread:"); [print(f"  {c:6d} {t}") for t,c in threads.most_common(12)]
print("by first library frame:"); [print(f"  {c:6d} {t}") for t,c in pkg.most_common(12)]
print("top frames:"); [print(f"  {c:6d} {t}") for t,c in top.most_common(25)]
