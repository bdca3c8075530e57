/** The plugin's version (kept equal to package.json's "version"; a test checks it). Runtime-neutral. @module */
export const VERSION = "0.1.0";
