// The panel's icon in the right sidebar: a spark over an anvil, drawn in the theme's icon
// colour (jp-icon3), so it follows light and dark themes.
import { LabIcon } from '@jupyterlab/ui-components';

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M3 9h13.5c0 2.6-2 4.5-4.5 4.7V16h2.5v2H6.5v-2H9v-2.3C5.8 13.4 3.6 11.6 3 9z"/>
    <path d="M17.5 9H21v1.6c-1.3 0-2.6-.5-3.5-1.6z"/>
    <path d="M15 2.5l.9 2 2.1.3-1.6 1.4.5 2.1-1.9-1.1-1.9 1.1.5-2.1-1.6-1.4 2.1-.3z"/>
  </g>
</svg>`;

export const forgeIcon = new LabIcon({ name: 'forge-jupyter:forge', svgstr: SVG });
