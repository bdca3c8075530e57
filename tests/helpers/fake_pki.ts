/**
 * A throw-away PKI for the fake API server, generated at test time: a self-signed CA, a server certificate for
 * 127.0.0.1/localhost, and a client certificate (CN = user, O = group) for client-certificate authentication.
 *
 * With `openssl` on PATH the certificates are made by it (what a cluster admin would do); otherwise by
 * node:crypto with a minimal DER encoder of X.509 v3 (ECDSA P-256 / SHA-256; extensions basicConstraints, keyUsage,
 * extKeyUsage, subjectAltName), since Node can sign but not build certificates.
 *
 * Test helper (node:child_process, node:crypto, node:fs).
 * @module
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { findTool } from "./netns.ts";

/** PEM material of the fake cluster. */
export interface FakePki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Who made it. */
  via: "openssl" | "node:crypto";
}

/** Subject of the client certificate. */
export interface ClientSubject {
  user: string;
  group?: string;
}

// ------------------------------------------------------------------------------------------------------------
// openssl

function openssl(args: string[], cwd: string): void {
  const r = spawnSync(findTool("openssl") ?? "openssl", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr}`);
}

function viaOpenssl(client: ClientSubject): FakePki {
  const dir = mkdtempSync(join(tmpdir(), "knp-pki-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=kubectl-netpath-fake-ca",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n");
  openssl(["req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=fake-apiserver"], dir);
  openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "2", "-days", "2", "-extfile", "server.ext", "-out", "server.crt"], dir);
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n");
  openssl(["req", ...ec, "-keyout", "client.key", "-out", "client.csr", "-subj", `/O=${client.group ?? "system:masters"}/CN=${client.user}`], dir);
  openssl(["x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "3", "-days", "2", "-extfile", "client.ext", "-out", "client.crt"], dir);
  const rd = (f: string) => readFileSync(join(dir, f), "utf8");
  return { caCert: rd("ca.crt"), serverCert: rd("server.crt"), serverKey: rd("server.key"), clientCert: rd("client.crt"), clientKey: rd("client.key"), via: "openssl" };
}

// ------------------------------------------------------------------------------------------------------------
// node:crypto + DER

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 255);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
}
const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);
/** A DER INTEGER (non-negative): minimal, as DER requires (a random serial starting with 0x00 was "illegal padding"). */
function int(n: number | Buffer): Buffer {
  let b = typeof n === "number" ? Buffer.from([n]) : n;
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  b = b.subarray(i);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}
function oid(text: string): Buffer {
  const parts = text.split(".").map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack = [p & 127];
    for (let v = p >>> 7; v > 0; v >>>= 7) stack.unshift((v & 127) | 128);
    out.push(...stack);
  }
  return tlv(0x06, Buffer.from(out));
}
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const octets = (b: Buffer) => tlv(0x04, b);
function utcTime(d: Date): Buffer {
  const p = (n: number) => String(n).padStart(2, "0");
  return tlv(0x17, Buffer.from(`${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`));
}
function name(cn: string, o?: string): Buffer {
  const rdns = [];
  if (o) rdns.push(set(seq(oid("2.5.4.10"), utf8(o))));
  rdns.push(set(seq(oid("2.5.4.3"), utf8(cn))));
  return seq(...rdns);
}
function ext(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), octets(value));
}
const ECDSA_SHA256 = "1.2.840.10045.4.3.2";

interface KeyPair {
  spki: Buffer;
  privatePem: string;
  privateKey: ReturnType<typeof generateKeyPairSync>["privateKey"];
}
function ecKey(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return {
    spki: publicKey.export({ type: "spki", format: "der" }) as Buffer,
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    privateKey,
  };
}

function certificate(o: { subject: Buffer; issuer: Buffer; key: KeyPair; signer: KeyPair; extensions: Buffer[] }): string {
  const now = Date.now();
  const tbs = seq(
    tlv(0xa0, int(2)),
    int(randomBytes(8)),
    seq(oid(ECDSA_SHA256)),
    o.issuer,
    seq(utcTime(new Date(now - 3600_000)), utcTime(new Date(now + 2 * 86400_000))),
    o.subject,
    o.key.spki,
    tlv(0xa3, seq(...o.extensions)),
  );
  const sig = sign("sha256", tbs, o.signer.privateKey);
  const der = seq(tbs, seq(oid(ECDSA_SHA256)), bits(sig));
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
}

function viaNodeCrypto(client: ClientSubject): FakePki {
  const ca = ecKey();
  const caName = name("kubectl-netpath-fake-ca");
  const caCert = certificate({
    subject: caName,
    issuer: caName,
    key: ca,
    signer: ca,
    extensions: [ext("2.5.29.19", true, seq(tlv(0x01, Buffer.from([0xff])))), ext("2.5.29.15", true, bits(Buffer.from([0x06]), 1))],
  });
  const server = ecKey();
  const san = seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from("localhost")));
  const serverCert = certificate({
    subject: name("fake-apiserver"),
    issuer: caName,
    key: server,
    signer: ca,
    extensions: [
      ext("2.5.29.19", true, seq()),
      ext("2.5.29.15", true, bits(Buffer.from([0xa0]), 5)),
      ext("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))),
      ext("2.5.29.17", false, san),
    ],
  });
  const cl = ecKey();
  const clientCert = certificate({
    subject: name(client.user, client.group ?? "system:masters"),
    issuer: caName,
    key: cl,
    signer: ca,
    extensions: [ext("2.5.29.19", true, seq()), ext("2.5.29.15", true, bits(Buffer.from([0xa0]), 5)), ext("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.2")))],
  });
  return { caCert, serverCert, serverKey: server.privatePem, clientCert, clientKey: cl.privatePem, via: "node:crypto" };
}

/**
 * Makes the PKI: with openssl when it is installed (unless `force` says otherwise), else with node:crypto.
 * @param client subject of the client certificate.
 * @param force pick the method (tests exercise both).
 */
export function makePki(client: ClientSubject = { user: "test-user" }, force?: "openssl" | "node:crypto"): FakePki {
  const useOpenssl = force === "openssl" || (force === undefined && findTool("openssl") !== undefined);
  return useOpenssl ? viaOpenssl(client) : viaNodeCrypto(client);
}
