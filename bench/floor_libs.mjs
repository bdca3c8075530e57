// The floor "chains" of bench/floor.mjs with the libraries the CLI is built on loaded and used once first: commander
// (argument parsing), yaml (a bundle's capture.yaml) and ip-cidr (CIDR containment), the three the project brief
// requires instead of code of our own. scripts/bench.mjs bundles this file with esbuild the way scripts/build.mjs
// bundles dist/ (minified, yaml's browser build), so the figure is what loading those libraries adds to a Node
// program that reads and splits the dump, measured in the same run as the floor and the query.
//
// Usage (the bundle): node bench/out/.gen/floor-libs.mjs chains DUMP. Prints what floor.mjs prints.
import { Command } from "commander";
import IPCIDR from "ip-cidr";
import YAML from "yaml";

new Command().argument("<mode>").argument("<dump>").parse(process.argv);
YAML.parse("tool: kubectl-netpath bench\n");
new IPCIDR("10.244.0.0/16").contains("10.244.1.7");
await import("./floor.mjs");
