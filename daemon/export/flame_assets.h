/* flame_assets: the flame graph's style and script (flame.css, flame.js),
 * built in as C strings by embed-text at build time. */
#ifndef JETT_DAEMON_FLAME_ASSETS_H
#define JETT_DAEMON_FLAME_ASSETS_H

extern const char flame_style[];
extern const char flame_script[];

#endif
