/** The plugin's version, for the CLI (`--version`); defined in src/model/version.ts so the edges share it. @module */
export { VERSION } from "../model/version.ts";
