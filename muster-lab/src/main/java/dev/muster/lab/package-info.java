/** placeholder */
package dev.muster.lab;
